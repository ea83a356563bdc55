"""The synth checks, kept apart from the stacks they check: the gates (cdk-nag, cfn-lint), the
resource limit, and the access report read back from the templates."""
