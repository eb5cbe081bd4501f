"""The Textual monitor: the app, its panes and widgets, themes and messages. The only layer that
imports Textual."""
