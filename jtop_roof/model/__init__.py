"""What a number is: typed records and their JSON, stream time, the source's description, and the
registry of metrics (labels, units, thresholds). The bottom layer: imports nothing of the package."""
