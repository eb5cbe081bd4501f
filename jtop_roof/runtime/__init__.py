"""One runtime under every command: the configuration, the source chosen from it, the pipeline
and its subscribers, and the one pump loop."""
