"""Application services behind the Lambda handlers: runs, approvals, turns, targets, workflow tasks."""
