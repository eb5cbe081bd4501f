"""The roof: the device database, ceilings from clocks, the board (device and power mode) of a
stream, a workload's FLOPs and bytes, and a measured roof."""
