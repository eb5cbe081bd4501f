"""What the runtime's numbers become: report, compare, export, plot and the Prometheus metrics."""
