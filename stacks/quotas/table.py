"""AWS's documented quotas that a synthesized template can cross and that the local AWS (moto)
does not enforce: one row each, with AWS's number, where AWS documents it, what the gate counts
and how, and what to change when a template crosses it.

This table is the one home of these numbers: the gate (:mod:`stacks.quotas.measures`)
checks against them, ``docs/quotas.md`` renders them (a test keeps the two equal), and the
stacks import them (``CLOUDFORMATION_RESOURCES.fixed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Bound(Enum):
    """Whether AWS allows at most or at least the quota's number."""

    AT_MOST = ">"
    AT_LEAST = "<"


@dataclass(frozen=True)
class Quota:
    """One documented quota.

    ``limit`` is AWS's number in ``unit``; None where the bound is another value of the same
    template, named by ``relative_to`` (a queue's visibility timeout against its consumer's
    timeout), which each measurement then carries. ``counted`` says what the gate measures and
    how, ``scope`` what one measurement covers, ``fix`` what to change.
    """

    name: str
    limit: int | None
    unit: str
    scope: str
    counted: str
    source: str
    fix: str
    adjustable: bool = False
    bound: Bound = Bound.AT_MOST
    relative_to: str = ""

    @property
    def fixed(self) -> int:
        """AWS's number, for a quota that has one."""
        if self.limit is None:
            raise ValueError(f"{self.name}: bound by another value of the template, not a number")
        return self.limit

    @property
    def number(self) -> str:
        """AWS's number as the table shows it."""
        if self.limit is None:
            return self.relative_to
        return f"{self.limit:,} {self.unit}"


_SQS_POLICY = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
    "quotas-policies.html"
)
_SNS_POLICY = (
    "https://docs.aws.amazon.com/sns/latest/dg/"
    "sns-access-policy-language-api-permissions-reference.html#sns-policy-quotas"
)
_IAM_SIZES = (
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html"
    "#reference_iam-quotas-entity-length"
)
_IAM_COUNTS = (
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html"
    "#reference_iam-quotas-entities"
)
_CLOUDFORMATION = (
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html"
)
_LAMBDA = (
    "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
    "#function-configuration-deployment-and-execution"
)
_SQS_EVENT_SOURCE = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html"
_EVENT_SOURCE_API = (
    "https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html"
    "#lambda-CreateEventSourceMapping-request-MaximumBatchingWindowInSeconds"
)

_COMPACT_BYTES = (
    "UTF-8 bytes of the document as compact JSON (no whitespace), the form CloudFormation "
    "passes on, every intrinsic resolved to the value CloudFormation gives it"
)
_IAM_CHARACTERS = (
    "characters of the document as compact JSON, whitespace not counted (IAM does not count "
    "it), every intrinsic resolved to the value CloudFormation gives it"
)
_SCALE_BY_SHAPE = (
    "grant many principals in one statement (an aws:PrincipalArn list or pattern per account "
    "under an organization condition, topic ARN lists in aws:SourceArn) instead of a "
    "statement per grant"
)

SQS_POLICY_BYTES = Quota(
    name="SQS queue policy size",
    limit=8_192,
    unit="bytes",
    scope="an AWS::SQS::QueuePolicy",
    counted=_COMPACT_BYTES,
    source=_SQS_POLICY,
    fix=_SCALE_BY_SHAPE,
)
SQS_POLICY_STATEMENTS = Quota(
    name="SQS queue policy statements",
    limit=20,
    unit="statements",
    scope="an AWS::SQS::QueuePolicy",
    counted="the entries of the document's Statement",
    source=_SQS_POLICY,
    fix=_SCALE_BY_SHAPE,
)
SQS_POLICY_PRINCIPALS = Quota(
    name="SQS queue policy principals",
    limit=50,
    unit="principals",
    scope="an AWS::SQS::QueuePolicy",
    counted="every value under every statement's Principal (AWS, Service, Federated, "
    "CanonicalUser; `*` is one), added up over the statements",
    source=_SQS_POLICY,
    fix="name the senders in a condition (aws:PrincipalOrgID, an aws:PrincipalArn pattern per "
    "account) instead of as principals",
)
SQS_POLICY_CONDITIONS = Quota(
    name="SQS queue policy conditions",
    limit=10,
    unit="conditions",
    scope="an AWS::SQS::QueuePolicy",
    counted="every condition key under every operator of every statement, added up over the "
    "statements (a key with a list of values is one)",
    source=_SQS_POLICY,
    fix="merge conditions: one key with a list of values, or fewer statements",
)
SQS_POLICY_ACTIONS = Quota(
    name="SQS queue policy actions per statement",
    limit=7,
    unit="actions",
    scope="the statement of an AWS::SQS::QueuePolicy with the most actions",
    counted="the values of the statement's Action (or NotAction)",
    source=_SQS_POLICY,
    fix="split the statement so that each names at most seven actions",
)
SNS_POLICY_BYTES = Quota(
    name="SNS topic policy size",
    limit=30 * 1_024,
    unit="bytes",
    scope="an AWS::SNS::TopicPolicy, for each topic it names",
    counted=f"{_COMPACT_BYTES}; AWS writes 30 KB, taken as 30 x 1,024 bytes",
    source=_SNS_POLICY,
    fix=_SCALE_BY_SHAPE,
)
SNS_POLICY_STATEMENTS = Quota(
    name="SNS topic policy statements",
    limit=100,
    unit="statements",
    scope="an AWS::SNS::TopicPolicy",
    counted="the entries of the document's Statement",
    source=_SNS_POLICY,
    fix=_SCALE_BY_SHAPE,
)
SNS_POLICY_PRINCIPALS = Quota(
    name="SNS topic policy principals per statement",
    limit=200,
    unit="principals",
    scope="the statement of an AWS::SNS::TopicPolicy with the most principals",
    counted="the values under the statement's Principal (`*` is one)",
    source=_SNS_POLICY,
    fix="admit publishers and subscribers by organization (aws:PrincipalOrgID) instead of by "
    "account",
)
SNS_POLICY_RESOURCES = Quota(
    name="SNS topic policy resources per statement",
    limit=1,
    unit="resource",
    scope="the statement of an AWS::SNS::TopicPolicy with the most resources",
    counted="the values of the statement's Resource: SNS takes exactly one, the policy's topic",
    source=_SNS_POLICY,
    fix="one topic per policy: each statement's Resource is that topic's ARN",
)
S3_BUCKET_POLICY_BYTES = Quota(
    name="S3 bucket policy size",
    limit=20 * 1_024,
    unit="bytes",
    scope="an AWS::S3::BucketPolicy",
    counted=f"{_COMPACT_BYTES}; AWS writes 20 KB, taken as 20 x 1,024 bytes",
    source="https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-iam-policies.html",
    fix="admit the writers of each account by one aws:PrincipalArn pattern instead of a "
    "statement per role",
)
KMS_KEY_POLICY_BYTES = Quota(
    name="KMS key policy size",
    limit=32_768,
    unit="bytes",
    scope="an AWS::KMS::Key",
    counted=_COMPACT_BYTES,
    source="https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-overview.html"
    "#key-policy-format",
    fix=_SCALE_BY_SHAPE,
)
KMS_ALIASES_PER_KEY = Quota(
    name="KMS aliases per key",
    limit=50,
    unit="aliases",
    scope="a KMS key: the AWS::KMS::Alias resources of the assembly that target it",
    counted="the aliases whose TargetKeyId resolves to the key (in any stack of its account "
    "and region); aliases made outside the assembly share the quota",
    source="https://docs.aws.amazon.com/kms/latest/developerguide/resource-limits.html"
    "#aliases-per-key",
    fix="fewer queues per shared key (one key per account encrypts at most 50 queues' "
    "aliases), or request an increase",
    adjustable=True,
)
IAM_ROLE_INLINE_POLICIES = Quota(
    name="IAM role inline policies size",
    limit=10_240,
    unit="characters",
    scope="an AWS::IAM::Role: its Policies and every AWS::IAM::Policy attached to it",
    counted=f"{_IAM_CHARACTERS}, added up over the role's inline policies (IAM's aggregate)",
    source=_IAM_SIZES,
    fix="grant by ARN pattern (one per account or prefix) instead of an ARN per queue or key, "
    "or spread the routes over more functions and roles",
)
IAM_MANAGED_POLICY_SIZE = Quota(
    name="IAM managed policy size",
    limit=6_144,
    unit="characters",
    scope="an AWS::IAM::ManagedPolicy",
    counted=_IAM_CHARACTERS,
    source=_IAM_SIZES,
    fix="split the managed policy, or grant by ARN pattern",
)
IAM_MANAGED_POLICIES_PER_ROLE = Quota(
    name="IAM managed policies per role",
    limit=10,
    unit="policies",
    scope="an AWS::IAM::Role",
    counted="its ManagedPolicyArns and the AWS::IAM::ManagedPolicy resources naming it in Roles",
    source=_IAM_COUNTS,
    fix="merge managed policies, or request an increase (to 20)",
    adjustable=True,
)
IAM_ROLE_TRUST_POLICY = Quota(
    name="IAM role trust policy length",
    limit=2_048,
    unit="characters",
    scope="an AWS::IAM::Role's AssumeRolePolicyDocument",
    counted=_IAM_CHARACTERS,
    source=_IAM_COUNTS,
    fix="fewer trust statements, or request an increase (to 4,096)",
    adjustable=True,
)
IAM_ROLES_PER_ACCOUNT = Quota(
    name="IAM roles per account",
    limit=1_000,
    unit="roles",
    scope="an account: every stack of the assembly in it",
    counted="the AWS::IAM::Role resources of the account's stacks; roles made outside the "
    "assembly share the quota",
    source=_IAM_COUNTS,
    fix="fewer roles per account, or request an increase (to 5,000)",
    adjustable=True,
)
CLOUDFORMATION_RESOURCES = Quota(
    name="CloudFormation resources per stack",
    limit=500,
    unit="resources",
    scope="a template",
    counted="the entries of Resources",
    source=_CLOUDFORMATION,
    fix="units not deployed yet go to another stack with `python -m stacks.placement recover`, "
    "which keeps every deployed unit where it is (a deployed queue given another stack is left "
    'behind, Retain); or remove units, or share one KMS key per account ("keys": "perAccount")',
)
CLOUDFORMATION_OUTPUTS = Quota(
    name="CloudFormation outputs per stack",
    limit=200,
    unit="outputs",
    scope="a template",
    counted="the entries of Outputs",
    source=_CLOUDFORMATION,
    fix="units not deployed yet go to another stack with `python -m stacks.placement recover`, "
    "which keeps every deployed unit where it is (a deployed queue given another stack is left "
    "behind, Retain); or remove units",
)
CLOUDFORMATION_PARAMETERS = Quota(
    name="CloudFormation parameters per stack",
    limit=200,
    unit="parameters",
    scope="a template",
    counted="the entries of Parameters",
    source=_CLOUDFORMATION,
    fix="split the stack, or pass the values as literals",
)
CLOUDFORMATION_MAPPINGS = Quota(
    name="CloudFormation mappings per stack",
    limit=200,
    unit="mappings",
    scope="a template",
    counted="the entries of Mappings",
    source=_CLOUDFORMATION,
    fix="split the stack",
)
CLOUDFORMATION_TEMPLATE_BYTES = Quota(
    name="CloudFormation template body size",
    limit=1_000_000,
    unit="bytes",
    scope="a template",
    counted="bytes of the template file as synthesized, which the CDK CLI uploads to S3 as it "
    "is; AWS writes 1 MB, taken as 1,000,000 bytes (as cfn-lint does), the smaller reading",
    source=_CLOUDFORMATION,
    fix="split the account's resources over more stacks",
)
CLOUDFORMATION_DESCRIPTION_BYTES = Quota(
    name="CloudFormation template description size",
    limit=1_024,
    unit="bytes",
    scope="a template",
    counted="UTF-8 bytes of the template's Description",
    source=_CLOUDFORMATION,
    fix="shorten the stack's description",
)
LAMBDA_ENVIRONMENT_BYTES = Quota(
    name="Lambda environment variables size",
    limit=4_096,
    unit="bytes",
    scope="an AWS::Lambda::Function",
    counted="UTF-8 bytes of Environment.Variables as compact JSON, the string Lambda measures "
    "(it quotes it when refusing), every intrinsic resolved to the value CloudFormation gives it",
    source=_LAMBDA,
    fix="carry large configuration in the function's asset instead of its environment, or "
    "spread it over more functions",
)
LAMBDA_RESOURCE_POLICY_BYTES = Quota(
    name="Lambda function resource-based policy size",
    limit=20 * 1_024,
    unit="bytes",
    scope="a function: the AWS::Lambda::Permission resources of the assembly that name it",
    counted="UTF-8 bytes of the policy Lambda builds from them, as compact JSON: a statement "
    "per permission with its principal, action, the function's ARN and its conditions, its "
    "Sid counted at the longest name CloudFormation generates; permissions made outside the "
    "assembly share the quota. AWS writes 20 KB, taken as 20 x 1,024 bytes",
    source=_LAMBDA,
    fix="one permission for many sources (an ARN pattern in SourceArn, or SourceAccount) "
    "instead of a permission per source",
)
LOGS_SUBSCRIPTION_FILTERS = Quota(
    name="CloudWatch Logs subscription filters per log group",
    limit=2,
    unit="filters",
    scope="a log group: the AWS::Logs::SubscriptionFilter resources of the assembly on it",
    counted="the filters whose LogGroupName resolves to the group (in any stack of its account "
    "and region); filters made outside the assembly share the quota",
    source="https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/"
    "API_PutSubscriptionFilter.html",
    fix="stream each log group to one destination",
)
_CLOUDWATCH_QUOTAS = (
    "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_limits.html"
)
_DASHBOARD_BODY = (
    "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/"
    "CloudWatch-Dashboard-Body-Structure.html"
)
DASHBOARD_WIDGETS = Quota(
    name="CloudWatch dashboard widgets",
    limit=500,
    unit="widgets",
    scope="an AWS::CloudWatch::Dashboard",
    counted="the widgets of its DashboardBody",
    source=_DASHBOARD_BODY,
    fix="split the dashboard (a MessagingDashboard per stack, fewer queues per graph)",
)
DASHBOARD_WIDGET_METRICS = Quota(
    name="CloudWatch metrics per dashboard widget",
    limit=500,
    unit="metrics",
    scope="a graph widget of an AWS::CloudWatch::Dashboard",
    counted="the entries of its metrics array (metrics and expressions)",
    source=_CLOUDWATCH_QUOTAS,
    fix="fewer metrics per graph (QUEUES_PER_GRAPH)",
)
DASHBOARD_METRICS = Quota(
    name="CloudWatch metrics per dashboard",
    limit=2_500,
    unit="metrics",
    scope="an AWS::CloudWatch::Dashboard",
    counted="the entries of every widget's metrics array",
    source=_CLOUDWATCH_QUOTAS,
    fix="split the dashboard: its stack's units over more stacks, or several dashboards",
)
DASHBOARD_STATUS_ALARMS = Quota(
    name="CloudWatch alarms per alarm status widget",
    limit=100,
    unit="alarms",
    scope="an alarm status widget of an AWS::CloudWatch::Dashboard",
    counted="the ARNs of its alarms array",
    source=_DASHBOARD_BODY,
    fix="more widgets of fewer alarms (ALARMS_PER_STATUS_WIDGET)",
)
ALARM_MATH_METRICS = Quota(
    name="CloudWatch metrics per metric-math alarm",
    limit=10,
    unit="metrics",
    scope="an AWS::CloudWatch::Alarm with Metrics",
    counted="its Metrics entries that read a metric (MetricStat)",
    source=_CLOUDWATCH_QUOTAS,
    fix="an alarm per group of at most 10 metrics",
)
EVENT_SOURCE_BATCH_SIZE = Quota(
    name="SQS event source batch size (standard queue)",
    limit=10_000,
    unit="messages",
    scope="an AWS::Lambda::EventSourceMapping reading a standard queue",
    counted="its BatchSize (10 when absent)",
    source=_SQS_EVENT_SOURCE,
    fix="a batch size from 1 to 10,000",
)
EVENT_SOURCE_FIFO_BATCH_SIZE = Quota(
    name="SQS event source batch size (FIFO queue)",
    limit=10,
    unit="messages",
    scope="an AWS::Lambda::EventSourceMapping reading a FIFO queue",
    counted="its BatchSize (10 when absent)",
    source=_SQS_EVENT_SOURCE,
    fix="a batch size from 1 to 10 on a FIFO queue",
)
EVENT_SOURCE_BATCHING_WINDOW = Quota(
    name="SQS event source batching window",
    limit=300,
    unit="s",
    scope="an AWS::Lambda::EventSourceMapping reading a queue",
    counted="its MaximumBatchingWindowInSeconds (0 when absent)",
    source=_EVENT_SOURCE_API,
    fix="a batching window from 0 to 300 s",
)
EVENT_SOURCE_FIFO_BATCHING_WINDOW = Quota(
    name="SQS event source batching window (FIFO queue)",
    limit=0,
    unit="s",
    scope="an AWS::Lambda::EventSourceMapping reading a FIFO queue",
    counted="its MaximumBatchingWindowInSeconds: a FIFO source takes none",
    source=_SQS_EVENT_SOURCE,
    fix="no batching window on a FIFO queue",
)
EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES = Quota(
    name="SQS event source batching window for a batch over 10",
    limit=1,
    unit="s",
    scope="an AWS::Lambda::EventSourceMapping reading a queue with a BatchSize over 10",
    counted="its MaximumBatchingWindowInSeconds (0 when absent)",
    source=_EVENT_SOURCE_API,
    fix="a batching window of at least 1 s, or a batch size of at most 10",
    bound=Bound.AT_LEAST,
)
EVENT_SOURCE_VISIBILITY_TIMEOUT = Quota(
    name="SQS event source queue visibility timeout",
    limit=None,
    unit="s",
    scope="an AWS::Lambda::EventSourceMapping reading a queue of the same template",
    counted="the queue's VisibilityTimeout (30 s when absent) against its function's Timeout "
    "(3 s when absent): Lambda refuses the mapping when the timeout is longer",
    source="https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html",
    fix="a visibility timeout of at least the function's timeout (AWS advises six times it)",
    bound=Bound.AT_LEAST,
    relative_to="the function's timeout",
)

QUOTAS: tuple[Quota, ...] = (
    SQS_POLICY_BYTES,
    SQS_POLICY_STATEMENTS,
    SQS_POLICY_PRINCIPALS,
    SQS_POLICY_CONDITIONS,
    SQS_POLICY_ACTIONS,
    SNS_POLICY_BYTES,
    SNS_POLICY_STATEMENTS,
    SNS_POLICY_PRINCIPALS,
    SNS_POLICY_RESOURCES,
    S3_BUCKET_POLICY_BYTES,
    KMS_KEY_POLICY_BYTES,
    KMS_ALIASES_PER_KEY,
    IAM_ROLE_INLINE_POLICIES,
    IAM_MANAGED_POLICY_SIZE,
    IAM_MANAGED_POLICIES_PER_ROLE,
    IAM_ROLE_TRUST_POLICY,
    IAM_ROLES_PER_ACCOUNT,
    CLOUDFORMATION_RESOURCES,
    CLOUDFORMATION_OUTPUTS,
    CLOUDFORMATION_PARAMETERS,
    CLOUDFORMATION_MAPPINGS,
    CLOUDFORMATION_TEMPLATE_BYTES,
    CLOUDFORMATION_DESCRIPTION_BYTES,
    LAMBDA_ENVIRONMENT_BYTES,
    LAMBDA_RESOURCE_POLICY_BYTES,
    LOGS_SUBSCRIPTION_FILTERS,
    DASHBOARD_WIDGETS,
    DASHBOARD_WIDGET_METRICS,
    DASHBOARD_METRICS,
    DASHBOARD_STATUS_ALARMS,
    ALARM_MATH_METRICS,
    EVENT_SOURCE_BATCH_SIZE,
    EVENT_SOURCE_FIFO_BATCH_SIZE,
    EVENT_SOURCE_BATCHING_WINDOW,
    EVENT_SOURCE_FIFO_BATCHING_WINDOW,
    EVENT_SOURCE_WINDOW_FOR_LARGE_BATCHES,
    EVENT_SOURCE_VISIBILITY_TIMEOUT,
)
"""Every quota the gate checks, in the order ``docs/quotas.md`` lists them."""
