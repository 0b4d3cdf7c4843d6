"""The HTTP API (API Gateway REST, IAM auth): its routes by resource, served by the api Lambda
(functions/api/handler.py) and by `wp-agent api serve` on a laptop."""
