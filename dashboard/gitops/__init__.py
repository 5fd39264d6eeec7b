"""The GitOps chain: merges, commits and pipeline states from webhooks, tied to Argo CD syncs and releases.

``receivers`` (views) take signed webhooks from GitHub, GitLab and Gitea and a bearer-token JSON form for any
CI; ``providers`` parses and verifies them (pure); ``services`` records them once; ``queries`` is the read
side the web pages call for the flow diagram's merge / git / sync nodes and the release page.
"""
