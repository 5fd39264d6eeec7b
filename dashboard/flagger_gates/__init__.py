"""Flagger gate webhooks served by the dashboard: Flagger asks, people decide (see ``services``)."""
