"""The serverless stack on one machine, for `wp-agent api serve` and the tests (extra `[local]`):
moto plays DynamoDB, Step Functions (executing the synthesized state machine), Secrets Manager,
EventBridge and Scheduler in-process; the state machine's Lambda tasks run the real task handlers
in-process; the API's real routes answer HTTP on 127.0.0.1."""
