"""The theme variables the plots draw with: panes and themes both read them, and neither imports the other."""

#: Our variables that hold a plain colour (plots need RGB, so no alpha or names of variables here).
PLOT_COLOURS = ("plot-1", "plot-2", "plot-3", "plot-4", "plot-5", "plot-6")
