"""The package as another team uses it: a wheel, not the checkout, in a fresh virtual
environment outside the repository, with the team's own CDK app: no feature flags, every
construct used directly, with queues, topics and keys the team made with aws-cdk-lib, and the
account bridge without the topology. The README's example is one such app: this suite runs the
README's very block. Both apps' templates pass cdk-nag (AwsSolutions, run as cdk-nag 3 wants)
and cfn-lint, and every grant to SNS names its topic.

Only ``constructs_lib`` and ``cross_account_runtime`` may be installed: top-level names such
as ``stacks`` or ``runtime`` would collide with anything else so named in a user's
environment.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from constructs import Construct

import constructs_lib
from constructs_lib.messaging_checks import RULES as MESSAGING_RULES

ROOT = Path(__file__).resolve().parent.parent
INSTALLED_NAMES = {"constructs_lib", "cross_account_runtime"}
NOT_PART_OF_THE_PACKAGE = (
    ".git",
    ".venv",
    "node_modules",
    "cdk.out",
    "out",
    ".cache",
    "build",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
)
pytestmark = pytest.mark.synth

TEAM_APP = """\
import json
import sys
from pathlib import Path

from aws_cdk import App, Duration, Environment, Stack, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from cdk_nag import AwsSolutionsChecks

import constructs_lib
from constructs_lib import (
    AccountBridge,
    BridgeAccount,
    BridgeIngress,
    BridgeShadow,
    CrossAccountQueueSubscription,
    CrossAccountRelay,
    DeliveryLogBucket,
    DeliveryLoggedTopic,
    DeliveryLogStream,
    DeliveryReportJob,
    EndpointQueue,
    MessageBodyBucket,
    MessagingAlarms,
    MessagingDashboard,
    MessagingKey,
    RelayDirection,
    RelayRoleGuard,
    RelayRoute,
    RelayTiming,
    SnsHttpsEndpoint,
)

app = App(outdir=sys.argv[1])
here = Environment(account="111111111111", region="eu-west-1")
stack = Stack(app, "Team", env=here)
sales = BridgeAccount("Sales", "111111111111")

key = MessagingKey(stack, "QueueKey", alias_name="alias/team/queues")
alarms = MessagingAlarms(stack, "Alarms")
dashboard = MessagingDashboard(stack, "Dashboard", dashboard_name="Team-messaging")
orders_queue = EndpointQueue(
    stack, "Orders", endpoint_name="Orders", shared_key=key, sender_accounts=["222222222222"]
)
alarms.watch_endpoint_queue("Orders", orders_queue.queue)
bodies = MessageBodyBucket(stack, "Bodies", bucket_name="messaging-bodies-111111111111-eu-west-1")

# A topic of ours, and one the team made with aws-cdk-lib.
topic = DeliveryLoggedTopic(stack, "OrderPlaced", topic_name="OrderPlaced")
topic_key = kms.Key(stack, "TeamTopicKey", enable_key_rotation=True)
team_topic = sns.Topic(
    stack, "TeamTopic", topic_name="TeamEvents", master_key=topic_key, enforce_ssl=True
)
webhook = SnsHttpsEndpoint(
    stack,
    "Webhook",
    topic=team_topic,
    handler="acme_webhooks.receive:handle",
    handler_code=Path(__file__).parent / "acme_webhooks",
)
dashboard.show_sns_endpoint(webhook, alarms.watch_sns_endpoint("Webhook", webhook))

# Queues the team made with aws-cdk-lib, subscribed and relayed.
queue_key = kms.Key(stack, "TeamQueueKey", enable_key_rotation=True)
team_dlq = sqs.Queue(
    stack,
    "TeamDlq",
    queue_name="Audit-dlq",
    encryption_master_key=queue_key,
    enforce_ssl=True,
)
team_queue = sqs.Queue(
    stack,
    "TeamQueue",
    queue_name="Audit",
    encryption_master_key=queue_key,
    enforce_ssl=True,
    visibility_timeout=RelayTiming.for_batch(10).visibility_timeout,
    dead_letter_queue=sqs.DeadLetterQueue(queue=team_dlq, max_receive_count=10),
)
topic.add_queue_subscription("Team", team_queue)
CrossAccountQueueSubscription(
    stack,
    "Invoices",
    topic_arn="arn:aws:sns:eu-west-1:222222222222:InvoiceSent",
    subscription_name="Team",
    queue=team_queue,
)
existing = EndpointQueue.from_queue_arn(
    stack,
    "Existing",
    "arn:aws:sqs:eu-west-1:111111111111:Billing",
    dead_letter_queue_arn="arn:aws:sqs:eu-west-1:111111111111:Billing-dlq",
)
outbound = CrossAccountRelay(
    stack,
    "Outbound",
    direction=RelayDirection.OUTBOUND,
    routes=[
        RelayRoute(existing, "arn:aws:sqs:eu-west-1:222222222222:Billing-ingress"),
        RelayRoute(team_queue, "arn:aws:sqs:eu-west-1:222222222222:Audit-ingress"),
    ],
    local_endpoints=["Sales"],
    role_name="team-outbound-relay",
)
dashboard.show_relay(outbound, alarms.watch_relay("TeamOutbound", outbound))
AccountBridge(
    stack,
    "Bridge",
    account_name=sales.name,
    local_endpoints=[orders_queue],
    shadows=[BridgeShadow("arn:aws:sqs:eu-west-1:222222222222:Billing")],
    ingress=[
        BridgeIngress(orders_queue, sender_accounts=[BridgeAccount("Billing", "222222222222")])
    ],
    body_bucket=bodies,
    alarms=alarms,
    dashboard=dashboard,
)

# The analytics account's half: delivery logs to S3 and the Spark report.
analytics = Stack(app, "Analytics", env=Environment(account="333333333333", region="eu-west-1"))
logs = DeliveryLogBucket(analytics, "Logs")
DeliveryLogStream(analytics, "Stream", log_bucket=logs, source_accounts=["111111111111"])
DeliveryReportJob(analytics, "Report", log_bucket=logs, idle_timeout=Duration.minutes(5))

# The organization's management account: the relay roles' names reserved to the deployers.
organization = Stack(app, "Organization", env=Environment(account="444444444444", region="us-east-1"))
RelayRoleGuard(organization, "RelayRoles", target_ids=["ou-ab12-cd34ef56"])

Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
app.synth()
print(json.dumps({"constructs_lib": constructs_lib.__file__}))
"""


UNDELIVERABLE = """\
from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sns as sns

sqs.Queue(sales_stack, "Bare")
team = Stack(app, "Team", env=Environment(account=sales.account_id, region=region))
unlogged = sns.Topic(team, "Unlogged")
aws_managed = sqs.Queue(team, "AwsManagedKey", encryption=sqs.QueueEncryption.KMS_MANAGED)
sns.Subscription(
    team,
    "ToAwsManagedKey",
    topic=unlogged,
    endpoint=aws_managed.queue_arn,
    protocol=sns.SubscriptionProtocol.SQS,
    dead_letter_queue=sqs.Queue(
        team, "ClosedDeadLetters", encryption=sqs.QueueEncryption.KMS_MANAGED
    ),
)
fifo = sqs.Queue(team, "Fifo", fifo=True)
sns.Subscription(
    team, "FifoOnStandard", topic=unlogged, endpoint=fifo.queue_arn,
    protocol=sns.SubscriptionProtocol.SQS,
)
sns.Subscription(
    team, "OtherAccount", topic=unlogged, protocol=sns.SubscriptionProtocol.SQS,
    endpoint=f"arn:aws:sqs:{region}:{billing.account_id}:Billing",
)
sqs.Queue(
    team, "ShortRetries",
    dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=1, queue=sqs.Queue(team, "Dlq")),
)
short = sqs.Queue(team, "ShortVisibility", visibility_timeout=Duration.seconds(30))
handler = lambda_.Function(
    team, "Handler", runtime=lambda_.Runtime.PYTHON_3_12, handler="index.handler",
    code=lambda_.Code.from_inline("def handler(event, context):\\n    return {}\\n"),
    timeout=Duration.seconds(30),
)
handler.add_event_source(sources.SqsEventSource(short, batch_size=10))
"""
"""A team's stack of plain aws-cdk-lib resources, appended to the README's app, that breaks
every rule of MessagingChecks (and a bare queue that breaks AwsSolutions')."""


MISTYPED_APP = """\
from aws_cdk import App, Stack

from constructs_lib import EndpointQueue

stack = Stack(App(), "Team")
EndpointQueue(stack, "Orders", endpoint_name=42)
"""
WRITTEN_INTO_THE_SOURCE = "written_into_the_source.json"
"""What building the wheel wrote into the copy of the checkout, beside the fixture's venv."""

README = ROOT / "README.md"
README_SECTION = "## Use the constructs in your own app"


def readme_example() -> str:
    """The Python block of the README's section on using the constructs in one's own app."""
    section = README.read_text(encoding="utf-8").split(README_SECTION, 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def pinned(requirements: Path, name: str) -> str:
    """``name``'s pinned requirement line in ``requirements``."""
    (line,) = [
        line
        for line in requirements.read_text(encoding="utf-8").splitlines()
        if line.split("==")[0].strip().lower() == name
    ]
    return line.strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the package's wheel installed with its ``gates`` extra
    (cdk-nag) and cfn-lint, as a team checking its app would (dependencies pinned as
    ``requirements.txt`` pins them); returns the environment's folder."""
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_PART_OF_THE_PACKAGE))
    before = files_under(source)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(work / "dist"), str(source)])
    (work / WRITTEN_INTO_THE_SOURCE).write_text(json.dumps(sorted(files_under(source) - before)))
    (wheel,) = (work / "dist").glob("*.whl")
    environment = work / "fresh"
    venv.EnvBuilder(with_pip=True).create(environment)
    run(
        [
            # The installer setup.sh installs the project with; it reads the wheel's metadata
            # as pip does, from its own cache of the pinned dependencies (a fresh machine's
            # pip would download aws-cdk-lib's 400 MB again), and compiles nothing: the app
            # compiles what it imports.
            str(Path(sys.executable).with_name("uv")),
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python_of(environment)),
            "--constraint",
            str(ROOT / "requirements.txt"),
            f"{wheel}[gates]",
            pinned(ROOT / "requirements-synth.txt", "cfn-lint"),
        ]
    )
    return environment


def files_under(folder: Path) -> set[str]:
    """Every file and folder below ``folder``, relative to it."""
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def python_of(environment: Path) -> Path:
    return environment / "bin" / "python"


def run(
    command: list[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; a failure shows the end of its output."""
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    assert result.returncode == 0, (
        f"{' '.join(command[:4])} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def test_only_the_constructs_and_the_runtime_are_installed(installed: Path) -> None:
    dist_info = dist_info_of(installed)
    recorded = {
        line.split(",")[0].split("/")[0] for line in (dist_info / "RECORD").read_text().splitlines()
    }
    assert recorded - {dist_info.name} == INSTALLED_NAMES


def dist_info_of(installed: Path) -> Path:
    (dist_info,) = installed.glob("lib/python*/site-packages/cross_account_messaging-*.dist-info")
    return dist_info


def test_building_the_package_writes_nothing_into_the_checkout(installed: Path) -> None:
    """``pip install .`` builds the wheel in the checkout as ``pip wheel`` does: a build that left
    ``build/`` or ``*.egg-info`` there would show in the team's ``git status``."""
    assert json.loads((installed.parent / WRITTEN_INTO_THE_SOURCE).read_text()) == []


def test_the_metadata_names_the_licence(installed: Path) -> None:
    dist_info = dist_info_of(installed)
    metadata = (dist_info / "METADATA").read_text(encoding="utf-8").split("\n\n", 1)[0]
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert (dist_info / "licenses" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()


def test_a_teams_mypy_reads_the_installed_constructs_types(installed: Path, tmp_path: Path) -> None:
    """Both packages carry ``py.typed`` (PEP 561): without it mypy would treat ``constructs_lib``
    as untyped and miss the wrong keyword. aws-cdk-lib's own types are skipped: checking them
    costs a minute and says nothing of this package."""
    for package in INSTALLED_NAMES:
        assert list(installed.glob(f"lib/python*/site-packages/{package}/py.typed"))
    (tmp_path / "team.py").write_text(MISTYPED_APP, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nstrict = True\n[mypy-aws_cdk.*,constructs.*,jsii.*]\nfollow_imports = skip\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            str(python_of(installed)),
            "--no-incremental",
            "--config-file",
            "mypy.ini",
            "team.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == (
        'team.py:6: error: Argument "endpoint_name" to "EndpointQueue" has incompatible type'
        ' "int"; expected "str"  [arg-type]'
    )


def synth(installed: Path, app: str, folder: Path) -> Path:
    """Run ``app`` as the team would, with the fresh environment's Python, no feature flags (no
    ``cdk.json``, no context) and nothing of the checkout on the path; returns its assembly
    (a cdk-nag finding fails the synth, as AwsSolutionsChecks reports them as errors)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(app, encoding="utf-8")
    assert not (folder / "cdk.json").exists()
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("PYTHONPATH", "VIRTUAL_ENV", "CDK_CONTEXT_JSON")
    }
    outdir = folder / "cdk.out"
    result = run([str(python_of(installed)), "app.py", str(outdir)], cwd=folder, env=environment)
    (folder / "used.json").write_text(
        result.stdout.strip().splitlines()[-1] if result.stdout else "{}"
    )
    return outdir


def nag_findings(outdir: Path) -> list[str]:
    """The findings cdk-nag wrote into the assembly's validation report (none when its pack
    found nothing: it reports only violations)."""
    report = json.loads((outdir / "validation-report.json").read_text(encoding="utf-8"))
    return [
        f"{construct['constructPath']}: {violation['ruleName']}"
        for plugin in report["pluginReports"]
        for violation in plugin.get("violations", [])
        for construct in violation.get("violatingConstructs", [])
    ]


def templates(outdir: Path) -> dict[str, dict[str, Any]]:
    return {
        path.name.removesuffix(".template.json"): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(outdir.glob("*.template.json"))
    }


def resources(template: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == kind]


def cfn_lint(installed: Path, outdir: Path) -> list[str]:
    """cfn-lint's errors and warnings on every template (its informational notes aside), run
    from the fresh environment with no configuration of ours."""
    result = subprocess.run(
        [
            str(installed / "bin" / "cfn-lint"),
            "--format",
            "json",
            *map(str, sorted(outdir.glob("*.template.json"))),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    findings = json.loads(result.stdout or "[]")
    return [
        f"{f['Filename']}: {f['Rule']['Id']}: {f['Message']}"
        for f in findings
        if f["Level"] != "Informational"
    ]


def sns_grants(outdir: Path) -> list[Mapping[str, Any]]:
    """Every queue-policy and key-policy statement that admits an SNS service principal."""
    statements: list[Mapping[str, Any]] = []
    for template in templates(outdir).values():
        documents = [p["PolicyDocument"] for p in resources(template, "AWS::SQS::QueuePolicy")]
        documents += [p["KeyPolicy"] for p in resources(template, "AWS::KMS::Key")]
        for document in documents:
            for statement in document["Statement"]:
                service = statement.get("Principal", {})
                services = service.get("Service", []) if isinstance(service, dict) else []
                services = [services] if isinstance(services, str) else services
                if statement["Effect"] == "Allow" and any("sns" in s for s in services):
                    statements.append(statement)
    return statements


def source_arns(statement: Mapping[str, Any]) -> list[str]:
    """The topics a statement's ``aws:SourceArn`` condition admits (none without one)."""
    admitted: list[Any] = []
    for operator in ("ArnEquals", "ArnLike", "StringEquals", "StringLike"):
        value = statement.get("Condition", {}).get(operator, {}).get("aws:SourceArn", [])
        admitted += value if isinstance(value, list) else [value]
    return [arn if isinstance(arn, str) else json.dumps(arn) for arn in admitted]


@pytest.fixture(scope="module")
def team_app(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's app synthesized with the installed package; returns its folder."""
    team = tmp_path_factory.mktemp("team")
    (team / "acme_webhooks").mkdir()
    (team / "acme_webhooks" / "__init__.py").write_text("")
    (team / "acme_webhooks" / "receive.py").write_text("def handle(notification):\n    pass\n")
    synth(installed, TEAM_APP, team)
    return team


def test_the_team_app_uses_every_construct_of_the_package() -> None:
    used = {
        node.id
        for node in ast.walk(ast.parse(TEAM_APP))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    constructs = {
        name
        for name in constructs_lib.__all__
        if inspect.isclass(getattr(constructs_lib, name))
        and issubclass(getattr(constructs_lib, name), Construct)
    }
    assert constructs - used == set()


def test_the_team_app_synthesizes_with_the_installed_package_and_cdk_nag(team_app: Path) -> None:
    used = Path(json.loads((team_app / "used.json").read_text())["constructs_lib"])
    assert not used.is_relative_to(ROOT)
    assert set(templates(team_app / "cdk.out")) == {"Team", "Analytics", "Organization"}
    assert nag_findings(team_app / "cdk.out") == []


def test_the_team_apps_templates_pass_cfn_lint(installed: Path, team_app: Path) -> None:
    assert cfn_lint(installed, team_app / "cdk.out") == []


def test_without_feature_flags_every_grant_to_sns_names_its_topics(team_app: Path) -> None:
    grants = sns_grants(team_app / "cdk.out")
    assert len(grants) >= 4
    assert all(source_arns(statement) for statement in grants), [
        statement for statement in grants if not source_arns(statement)
    ]


def test_the_webhook_ships_the_teams_handler_with_the_runtime(team_app: Path) -> None:
    team = templates(team_app / "cdk.out")["Team"]
    functions = resources(team, "AWS::Lambda::Function")
    handlers = sorted(p["Handler"] for p in functions)
    assert all(h.startswith("cross_account_runtime.") for h in handlers), handlers
    webhook = next(p for p in functions if "sns_endpoint" in p["Handler"])
    asset = team_app / "cdk.out" / f"asset.{webhook['Code']['S3Key'].removesuffix('.zip')}"
    shipped = {str(p.relative_to(asset)) for p in asset.rglob("*.py")}
    assert "acme_webhooks/receive.py" in shipped
    assert any(name.startswith("cross_account_runtime/sns_endpoint/") for name in shipped)
    assert not any(name.startswith("cross_account_runtime/delivery_report/") for name in shipped)


def test_the_bridge_has_the_fixed_relay_role_names(team_app: Path) -> None:
    team = templates(team_app / "cdk.out")["Team"]
    roles = {p.get("RoleName") for p in resources(team, "AWS::IAM::Role")}
    assert {
        "messaging-relay-outbound-Sales",
        "messaging-relay-inbound-Sales",
        "team-outbound-relay",
    } <= roles


def test_the_readme_example_synthesizes_and_passes_cdk_nag_and_cfn_lint(
    installed: Path, tmp_path: Path
) -> None:
    outdir = synth(installed, readme_example(), tmp_path / "readme")
    assert set(templates(outdir)) == {"Billing", "Sales"}
    assert nag_findings(outdir) == []
    assert cfn_lint(installed, outdir) == []
    grants = sns_grants(outdir)
    assert grants
    assert all(source_arns(statement) for statement in grants)
    billing = templates(outdir)["Billing"]
    queues = {p.get("QueueName") for p in resources(billing, "AWS::SQS::Queue")}
    assert {"Billing", "Billing-ingress"} <= queues
    sales = templates(outdir)["Sales"]
    assert "Billing" in {p.get("QueueName") for p in resources(sales, "AWS::SQS::Queue")}


def test_cdk_nag_run_as_the_readme_runs_it_refuses_what_would_lose_messages(
    installed: Path, tmp_path: Path
) -> None:
    """The README's way of running cdk-nag is live: the same app with a bare queue and a
    team's stack of plain aws-cdk-lib resources that would lose messages fails its synth,
    naming AwsSolutions' rules and every rule of MessagingChecks."""
    app = readme_example().replace("app.synth()", UNDELIVERABLE + "app.synth()")
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "app.py").write_text(app, encoding="utf-8")
    environment = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH",)}
    result = subprocess.run(
        [str(python_of(installed)), "app.py", str(folder / "cdk.out")],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    found = {finding.rsplit(": ", 1)[1] for finding in nag_findings(folder / "cdk.out")}
    assert {"AwsSolutions-SQS3", "AwsSolutions-SQS4"} <= found
    assert {rule.rule_id for rule in MESSAGING_RULES} <= found
