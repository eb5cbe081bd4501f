"""What follows from the stream: the pipeline, display history, the energy ledger, the throttle
detectors and the roofline verdict of a span."""
