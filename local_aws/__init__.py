"""The embedded local AWS: moto in server mode on 127.0.0.1, and deploying to it with the CDK CLI."""
