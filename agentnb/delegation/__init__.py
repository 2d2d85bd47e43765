"""Delegation: a tool call that starts a child run — an agent as a tool, a handoff, a team's
member — and how the child's state and record come back to the parent."""
