"""Prometheus for the dashboard: per-cluster addresses, a client that never raises into a page, chart
data for analysis queries and the canary-vs-stable panel, and the analysis dry run."""
