"""Notifications: findings raised and cleared, and action outcomes, to Slack and generic JSON webhooks."""
