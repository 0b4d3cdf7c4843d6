"""AWS adapters (DynamoDB, Step Functions, EventBridge, Scheduler); boto3 is imported lazily."""
