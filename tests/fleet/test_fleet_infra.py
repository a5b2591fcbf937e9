"""The spot fleet of infra/fleet.yaml: `quadfleet fleet up/scale/status/down` against a moto server (the real
CLI in separate processes), the template checked statically where moto does not go, and the worker's
scale-in protection and leaving the group run against moto's Auto Scaling.

What moto creates from the template: the queues (with the redrive policy), the bucket (with its encryption),
the IAM role and instance profile (with the inline policy), the security group, the launch template (with
metadata options and user data) and the Auto Scaling group (with the mixed-instances policy; instances are
launched, on-demand and typeless). What it silently skips, checked here by parsing the template instead: the
target-tracking scaling policy, the bucket policy (TLS only), the bucket's public access block, and the group's
capacity rebalancing and metrics collection. moto never reaches a failed stack state: that path is driven with
a stub CloudFormation client. Everything talks to 127.0.0.1 only.
"""
from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import boto3
import pytest
from fleet_helpers import FakeImds, Fleet, build_slow_archive, fleet_env, input_id_of, wait_until
from quadfleet.coordinator.fleet import commands as fleet_mod
from quadfleet.coordinator.fleet.cost import PriceBasis, crawl_cost
from quadfleet.coordinator.fleet.measured import load

from quadfleet import __version__

moto_server = pytest.importorskip("moto.server")

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "infra" / "fleet.yaml"
ACCOUNT, REGION = "123456789012", "us-east-1"
DEFAULT_TYPES = ["c7a.2xlarge", "c6a.2xlarge", "c7i.2xlarge", "c6i.2xlarge", "m7a.2xlarge", "m6a.2xlarge",
                 "c5a.2xlarge", "c5.2xlarge"]

# The instance role's least privilege, statement by statement (Sid: actions).
ROLE_ACTIONS = {
    "ReadInput": {"s3:GetObject"},
    "ListInput": {"s3:ListBucket"},
    "ReadWriteOutput": {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"},
    "ListOutput": {"s3:ListBucket"},
    "WorkTheQueue": {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility",
                     "sqs:GetQueueAttributes"},
    "DeadLetter": {"sqs:SendMessage", "sqs:GetQueueUrl"},
    "ScaleInProtectionAndLeaving": {"autoscaling:SetInstanceProtection",
                                    "autoscaling:TerminateInstanceInAutoScalingGroup"},
    "ReadCode": {"s3:GetObject"},
    "CodeIsReadOnly": {"s3:PutObject", "s3:DeleteObject"},   # Effect Deny: the shipped code, read only
}
# Where a resource holds a wildcard, and why nothing narrower exists. No statement has Resource "*": the one
# call AWS allows no scoping for that a worker might have needed (DescribeAutoScalingInstances, to learn its
# group) is not made - the group comes from the instance's own tags in the metadata service.
ALLOWED_WILDCARDS = {
    # the objects of a named bucket (or under a named prefix): keys not written yet cannot be named
    "s3 objects": re.compile(r"arn:aws:s3:::[a-z0-9][a-z0-9.-]+(/[^*]+)?/\*"),
    # the group's UUID, unknown until the group exists (the role cannot depend on the group it serves)
    "group uuid": re.compile(r"arn:aws:autoscaling:[a-z0-9-]+:\d{12}:autoScalingGroup:\*:autoScalingGroupName/[\w-]+"),
}
SECRETS = re.compile(r"AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|aws_secret_access_key|aws_access_key_id|aws_session_token"
                     r"|AWS_SECRET|AWS_ACCESS_KEY|AWS_SESSION_TOKEN|aws configure|password|BEGIN [A-Z ]*PRIVATE KEY"
                     r"|testing", re.IGNORECASE)


class Aws(Fleet):
    """Fleet plus the clients the infrastructure checks need."""

    def __init__(self, endpoint: str, tmp: Path):
        super().__init__(endpoint, tmp)
        kw = {"endpoint_url": endpoint, "region_name": REGION, "aws_access_key_id": "testing",
              "aws_secret_access_key": "testing"}
        self.cfn = boto3.client("cloudformation", **kw)
        self.asg = boto3.client("autoscaling", **kw)
        self.ec2 = boto3.client("ec2", **kw)
        self.iam = boto3.client("iam", **kw)
        self.ssm = boto3.client("ssm", **kw)

    def fleet(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
        # (`fleet up` uploads the code and a wheelhouse of about 110 MB to the moto server: on a loaded 2-core
        # machine that took over the CLI helper's default minute)
        res = self.cli("fleet", *args, timeout=300)
        if ok:
            assert res.returncode == 0, res.stderr
        return res

    def outputs(self, stack: str) -> dict[str, str]:
        st = self.cfn.describe_stacks(StackName=stack)["Stacks"][0]
        assert st["StackStatus"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), st
        return {o["OutputKey"]: o["OutputValue"] for o in st["Outputs"]}

    def resource(self, stack: str, logical_id: str) -> str:
        summaries = self.cfn.list_stack_resources(StackName=stack)["StackResourceSummaries"]
        (found,) = [r["PhysicalResourceId"] for r in summaries if r["LogicalResourceId"] == logical_id]
        return found

    def group(self, name: str) -> dict | None:
        groups = self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"]
        return groups[0] if groups else None

    def protected(self, instance_id: str) -> bool | None:
        """Scale-in protection of an instance, or None when it is in no group."""
        found = self.asg.describe_auto_scaling_instances(InstanceIds=[instance_id])["AutoScalingInstances"]
        return found[0]["ProtectedFromScaleIn"] if found else None

    def state(self, instance_id: str) -> str:
        return self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0][
            "State"]["Name"]

    def role_statements(self, stack: str) -> list[dict]:
        role = self.resource(stack, "InstanceRole")
        names = self.iam.list_role_policies(RoleName=role)["PolicyNames"]
        assert names == ["quadfleet-worker"]
        doc = self.iam.get_role_policy(RoleName=role, PolicyName=names[0])["PolicyDocument"]
        return policy(doc)["Statement"]

    def user_data(self, stack: str) -> str:
        lt = self.resource(stack, "LaunchTemplate")
        data = self.ec2.describe_launch_template_versions(LaunchTemplateId=lt)["LaunchTemplateVersions"][0][
            "LaunchTemplateData"]
        return base64.b64decode(data["UserData"]).decode()


def policy(doc) -> dict:
    """A policy document as moto returns it: a dict, JSON, or (moto's quirk for CloudFormation-made inline
    policies) the repr of a dict."""
    if isinstance(doc, dict):
        return doc
    try:
        return json.loads(doc)
    except ValueError:
        return ast.literal_eval(doc)


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


@pytest.fixture
def aws(moto_endpoint, tmp_path):
    urllib.request.urlopen(urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST"),
                           timeout=10).close()
    a = Aws(moto_endpoint, tmp_path)
    a.bucket("crawl")  # the archives
    a.bucket("out")  # a bucket of the user's
    yield a
    a.close()


# -- the template, statically ---------------------------------------------------------------------------------

def test_cfn_lint_passes():
    pytest.importorskip("cfnlint", reason="cfn-lint is not installed (pip install -e '.[test]')")
    res = subprocess.run([sys.executable, "-m", "cfnlint", *map(str, sorted(TEMPLATE.parent.glob("*.yaml")))],
                         capture_output=True, text=True, timeout=300, check=False)
    if res.returncode and "No module named cfnlint" in res.stderr and shutil.which("cfn-lint"):
        res = subprocess.run(["cfn-lint", *map(str, sorted(TEMPLATE.parent.glob("*.yaml")))],
                             capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def template() -> dict:
    return fleet_mod.load_template(TEMPLATE.read_text())


def iam_statements(t: dict) -> list[dict]:
    """Every statement of the instance role in any branch of the template's conditions."""
    found = []

    def walk(item):
        if isinstance(item, dict) and "Fn::If" in item:
            for branch in item["Fn::If"][1:]:
                walk(branch)
        elif isinstance(item, dict) and item != {"Ref": "AWS::NoValue"}:
            found.append(item)
    for pol in t["Resources"]["InstanceRole"]["Properties"]["Policies"]:
        for st in pol["PolicyDocument"]["Statement"]:
            walk(st)
    return found


def sub_strings(value) -> list[str]:
    """The text of a resource value in every branch: Fn::Sub templates, literals; Fn::GetAtt as GETATT."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in sub_strings(v)]
    if "Fn::If" in value:
        return [s for branch in value["Fn::If"][1:] for s in sub_strings(branch)]
    if "Fn::Sub" in value:
        sub = value["Fn::Sub"]
        return [sub if isinstance(sub, str) else sub[0]]
    if "Fn::GetAtt" in value:
        return [f"GETATT:{'.'.join(value['Fn::GetAtt'])}"]
    raise AssertionError(f"unexpected resource value {value}")


def test_template_holds_what_moto_skips():
    t = template()
    res, params = t["Resources"], t["Parameters"]
    assert params["QuadfleetVersion"]["Default"] == __version__, "the template pins the package's version"

    # the instance role: least privilege in every branch, no "*" action, no "*" resource
    statements = iam_statements(t)
    assert {st["Sid"] for st in statements} == set(ROLE_ACTIONS)
    for st in statements:
        assert st["Effect"] == ("Deny" if st["Sid"] == "CodeIsReadOnly" else "Allow")
        assert "NotAction" not in st and "NotResource" not in st
        actions = set(as_list(st["Action"]))
        assert not any("*" in a for a in actions), st
        assert actions == ROLE_ACTIONS[st["Sid"]], st
        for text in sub_strings(st["Resource"]):
            assert text.strip() != "*" and (text.startswith(("arn:${AWS::Partition}:", "GETATT:"))), st
            if "*" in text and text.startswith("arn:"):
                rendered = text.replace("${AWS::Partition}", "aws").replace("${AWS::Region}", REGION).replace(
                    "${AWS::AccountId}", ACCOUNT)
                rendered = re.sub(r"\$\{[A-Za-z:]+\}", "name", rendered)
                assert any(p.fullmatch(rendered) for p in ALLOWED_WILDCARDS.values()), (st["Sid"], rendered)
    trust = res["InstanceRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust == [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]
    assert "ManagedPolicyArns" not in res["InstanceRole"]["Properties"]

    # target tracking on backlog per instance (moto skips scaling policies)
    scaling = res["BacklogScaling"]["Properties"]
    assert scaling["PolicyType"] == "TargetTrackingScaling"
    tt = scaling["TargetTrackingConfiguration"]
    assert tt["TargetValue"] == {"Ref": "BacklogPerInstance"}
    metrics = {m["Id"]: m for m in tt["CustomizedMetricSpecification"]["Metrics"]}
    assert metrics["visible"]["MetricStat"]["Metric"]["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert metrics["instances"]["MetricStat"]["Metric"]["MetricName"] == "GroupInServiceInstances"
    assert metrics["backlog"]["Expression"].replace(" ", "") == "visible/instances"
    assert [m["Id"] for m in metrics.values() if m["ReturnData"]] == ["backlog"]

    # the group: all spot, price-capacity-optimized, rebalancing, several zones, busy instances protect themselves
    group = res["WorkerGroup"]["Properties"]
    dist = group["MixedInstancesPolicy"]["InstancesDistribution"]
    assert dist == {"OnDemandBaseCapacity": 0, "OnDemandPercentageAboveBaseCapacity": 0,
                    "SpotAllocationStrategy": "price-capacity-optimized"}
    assert group["CapacityRebalance"] is True and group["NewInstancesProtectedFromScaleIn"] is False
    assert group["MinSize"] == "0" and group["VPCZoneIdentifier"] == {"Ref": "Subnets"}
    assert "GroupInServiceInstances" in group["MetricsCollection"][0]["Metrics"]
    assert len(group["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"]) == fleet_mod.MAX_TYPES
    assert params["InstanceTypes"]["Default"].split(",") == DEFAULT_TYPES

    # the launch template: IMDSv2 with hop limit 1, AMI from the public SSM parameters, no inbound traffic
    data = res["LaunchTemplate"]["Properties"]["LaunchTemplateData"]
    assert data["MetadataOptions"] == {"HttpEndpoint": "enabled", "HttpTokens": "required",
                                       "HttpPutResponseHopLimit": 1, "InstanceMetadataTags": "enabled"}
    assert data["ImageId"] == {"Fn::If": ["IsArm64", {"Ref": "AmiArm64"}, {"Ref": "AmiX86"}]}
    for name, arch in (("AmiX86", "x86_64"), ("AmiArm64", "arm64")):
        assert params[name]["Type"] == "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>"
        assert params[name]["Default"] == f"/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{arch}"
    assert "InstanceMarketOptions" not in data  # the group's MixedInstancesPolicy decides the market
    sg = res["WorkerSecurityGroup"]["Properties"]
    assert "SecurityGroupIngress" not in sg and {e["FromPort"] for e in sg["SecurityGroupEgress"]} == {443}

    # the bucket: encrypted, private, TLS only, kept; the queues kept too (moto skips the policy and the block)
    bucket = res["OutputBucket"]
    assert bucket["DeletionPolicy"] == "Retain" and bucket["UpdateReplacePolicy"] == "Retain"
    assert bucket["Properties"]["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    enc = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert enc["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    (tls,) = res["OutputBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert tls["Effect"] == "Deny" and tls["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert res["OutputBucketPolicy"]["DeletionPolicy"] == "Retain"
    for q in ("WorkQueue", "DeadLetterQueue"):
        assert res[q]["DeletionPolicy"] == "Retain" and res[q]["Condition"] == "CreateQueue"
    assert res["OutputBucket"]["Condition"] == "CreateBucket"


# -- up, against moto ------------------------------------------------------------------------------------------

def test_fleet_up_creates_the_stack(aws):
    res = aws.fleet("up", "--stack", "qf", "--size", "2")
    out = aws.outputs("qf")
    assert "CREATE_COMPLETE" in res.stderr

    # the queue and its dead-letter queue, with the redrive policy
    url = aws.sqs.get_queue_url(QueueName="qf-work")["QueueUrl"]
    # printed as this machine reaches it (issue 24: the stack's output names the AWS URL, not the endpoint's)
    assert f"queue\t{url}" in res.stdout and url.startswith("http://127.0.0.1"), (res.stdout, out["QueueUrl"])
    assert f"next: quadfleet enqueue --queue-url {url} " in res.stderr
    assert "quadfleet fleet scale --stack qf N (now 2)" in res.stderr  # the hint knows --size
    dlq = aws.sqs.get_queue_url(QueueName="qf-work-dlq")["QueueUrl"]
    attrs = aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    dlq_arn = aws.sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert json.loads(attrs["RedrivePolicy"]) == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3}
    assert attrs["VisibilityTimeout"] == "900"
    assert aws.sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"quadfleet:stack": "qf", "quadfleet:out": out["Out"]}

    # the bucket, encrypted
    bucket = out["OutputBucket"]
    assert out["Out"] == f"s3://{bucket}"
    rules = aws.s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"

    # the launch template: IMDSv2 required, hop limit 1, the current AL2023 AMI, the instance profile
    lt = aws.resource("qf", "LaunchTemplate")
    data = aws.ec2.describe_launch_template_versions(LaunchTemplateId=lt)["LaunchTemplateVersions"][0][
        "LaunchTemplateData"]
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 1
    assert data["MetadataOptions"]["InstanceMetadataTags"] == "enabled"
    ami = aws.ssm.get_parameter(Name="/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64")
    assert data["ImageId"] == ami["Parameter"]["Value"]
    profile = aws.resource("qf", "InstanceProfile")
    assert data["IamInstanceProfile"]["Arn"].endswith(f"instance-profile/{profile}")
    assert all(b["Ebs"]["Encrypted"] for b in data["BlockDeviceMappings"])

    # the code shipped (issue 27): this checkout's source and a wheelhouse, under the bucket the stack made,
    # named by the digest of SHA256SUMS, which lists every file's digest; the stack is given that digest
    params = {p["ParameterKey"]: p["ParameterValue"] for p in aws.cfn.describe_stacks(StackName="qf")["Stacks"][0][
        "Parameters"]}
    digest = params["PackageDigest"]
    assert params["InstallFrom"] == "s3" and re.fullmatch(r"[0-9a-f]{64}", digest) and out["Code"] == f"sha256:{digest}"
    prefix = f".quadfleet-code/{digest}/"
    keys = {o["Key"][len(prefix):] for o in aws.s3.list_objects_v2(Bucket=out["OutputBucket"], Prefix=prefix)[
        "Contents"]}
    sums = aws.s3.get_object(Bucket=out["OutputBucket"], Key=prefix + "SHA256SUMS")["Body"].read()
    assert hashlib.sha256(sums).hexdigest() == digest
    listed = dict(line.split("  ")[::-1] for line in sums.decode().splitlines())
    assert keys == set(listed) | {"SHA256SUMS"}
    assert f"quadfleet-{__version__}.tar.gz" in listed and any(k.startswith("lxml-") for k in listed)
    assert not any(k.startswith(("matplotlib-", "pillow-", "contourpy-")) for k in listed), "the plotting stack"
    assert "shipped quadfleet" in res.stderr and digest[:12] in res.stderr

    # the user data: the shipped code checked and installed without an index, the service, no secrets
    user_data = aws.user_data("qf")
    assert f'base="s3://{out["OutputBucket"]}/.quadfleet-code/{digest}"' in user_data
    assert f'echo "{digest}  $code/SHA256SUMS" | sha256sum --check --strict -' in user_data
    assert 'if [ "s3" = pypi ]' in user_data
    installs = [line.strip() for line in user_data.splitlines() if "pip install" in line]
    assert installs and all("--no-index" in line for line in installs if "quadfleet==" not in line)
    assert f'!= "quadfleet {__version__}"' in user_data  # the installed version is checked
    # every accelerator must run, else setup fails (set -e; the ERR trap stops the instance)
    assert "\n/opt/quadfleet/bin/python -m quadfleet.worker.native --require\n" in user_data
    assert "set -euo pipefail" in user_data and "trap 'echo \"quadfleet setup failed" in user_data
    (exec_start,) = re.findall(r"^ExecStart=(.*)$", user_data, re.MULTILINE)
    assert exec_start == f"/opt/quadfleet/bin/quadfleet work --queue-url {out['QueueUrl']} --idle-exit 300"
    for line in ("Restart=on-failure", "StandardOutput=journal", "StandardError=journal", "KillMode=mixed",
                 "WantedBy=multi-user.target", "systemctl enable --now quadfleet.service"):
        assert line in user_data
    assert not SECRETS.search(user_data), SECRETS.search(user_data)
    if shutil.which("bash"):
        syntax = subprocess.run(["bash", "-n"], input=user_data, capture_output=True, text=True, check=False)
        assert syntax.returncode == 0, syntax.stderr

    # the group: the mixed-instances policy, several zones, the instances
    group = aws.group(out["AutoScalingGroupName"])
    mip = group["MixedInstancesPolicy"]
    assert mip["InstancesDistribution"]["OnDemandPercentageAboveBaseCapacity"] == 0
    assert mip["InstancesDistribution"]["OnDemandBaseCapacity"] == 0
    assert mip["InstancesDistribution"]["SpotAllocationStrategy"] == "price-capacity-optimized"
    assert [o["InstanceType"] for o in mip["LaunchTemplate"]["Overrides"]] == DEFAULT_TYPES
    assert mip["LaunchTemplate"]["LaunchTemplateSpecification"]["LaunchTemplateId"] == lt
    assert len(group["VPCZoneIdentifier"].split(",")) >= 2 and len(group["AvailabilityZones"]) >= 2
    assert group["DesiredCapacity"] == 2 and len(group["Instances"]) == 2
    assert group["MinSize"] == 0 and group["MaxSize"] == 20

    # the role: exactly the worker's needs, scoped to this stack's queue, bucket and group
    statements = {st["Sid"]: st for st in aws.role_statements("qf")}
    assert set(statements) == set(ROLE_ACTIONS)
    for sid, st in statements.items():
        assert st["Effect"] == ("Deny" if sid == "CodeIsReadOnly" else "Allow")
        assert set(as_list(st["Action"])) == ROLE_ACTIONS[sid]
        for resource in as_list(st["Resource"]):
            assert resource != "*"
            if "*" in resource:
                assert any(p.fullmatch(resource) for p in ALLOWED_WILDCARDS.values()), (sid, resource)
    assert statements["ReadInput"]["Resource"] == "arn:aws:s3:::commoncrawl/*"
    assert statements["ReadWriteOutput"]["Resource"] == f"arn:aws:s3:::{bucket}/*"
    assert statements["ListOutput"]["Resource"] == f"arn:aws:s3:::{bucket}"
    code_arn = f"arn:aws:s3:::{bucket}/.quadfleet-code/*"
    assert statements["ReadCode"]["Resource"] == code_arn == statements["CodeIsReadOnly"]["Resource"]
    assert statements["WorkTheQueue"]["Resource"] == f"arn:aws:sqs:{REGION}:{ACCOUNT}:qf-work"
    assert statements["DeadLetter"]["Resource"] == dlq_arn
    assert statements["ScaleInProtectionAndLeaving"]["Resource"] == (
        f"arn:aws:autoscaling:{REGION}:{ACCOUNT}:autoScalingGroup:*:autoScalingGroupName/qf-workers")

    # status reads it all back
    st = aws.fleet("status", "--stack", "qf").stdout
    assert "qf-workers: desired 2" in st and "InService" in st and "no run at" in st
    # the code shipped, and what the instances run (their launch template's tag)
    assert re.search(rf"\| code run +\| sha256:{digest} x2 ", st), st
    # an instance whose setup failed put its log under the output location before stopping: status says why
    aws.s3.put_object(Bucket=bucket, Key=".fleet/setup-failed/i-0abc.log",
                      Body=b"+ sha256sum --check --strict SHA256SUMS\nrich-15.0.0-py3-none-any.whl: FAILED\n"
                           b"quadfleet setup failed: the instance stops\n")
    st = aws.fleet("status", "--stack", "qf").stdout
    assert "setup failed" in st and "i-0abc: rich-15.0.0-py3-none-any.whl: FAILED" in " ".join(st.split()), st

    # an update: Graviton types select the arm64 AMI; parameters not given keep their values. (moto re-renders
    # only resources that Ref a changed parameter: the group here; the launch template's AMI follows the
    # IsArm64 condition, checked in the template.)
    before = {p["ParameterKey"]: p["ParameterValue"]
              for p in aws.cfn.describe_stacks(StackName="qf")["Stacks"][0]["Parameters"]}
    aws.fleet("up", "--stack", "qf", "--instance-types", "c7g.2xlarge,c6g.2xlarge", "--idle-exit", "120", "--from-pypi", __version__)
    assert aws.outputs("qf")["QueueUrl"] == out["QueueUrl"]
    after = {p["ParameterKey"]: p["ParameterValue"]
             for p in aws.cfn.describe_stacks(StackName="qf")["Stacks"][0]["Parameters"]}
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"InstanceTypes", "Architecture", "IdleExitSeconds", "InstallFrom", "PackageDigest"}, changed
    assert after["InstallFrom"] == "pypi" and aws.outputs("qf")["Code"] == f"pypi quadfleet=={__version__}"
    assert after["Architecture"] == "arm64" and after["IdleExitSeconds"] == "120"
    group = aws.group("qf-workers")
    assert [o["InstanceType"] for o in group["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"]] == [
        "c7g.2xlarge", "c6g.2xlarge"]
    # instances launched before and after an update run different code: status counts each (moto does not
    # re-render the launch template's tags on an update, so the table is fed what AWS would give)
    from collections import Counter

    from quadfleet.coordinator.fleet.status import status_table
    from rich.console import Console

    state = {"stack": "UPDATE_COMPLETE", "version": __version__, "shipped": f"pypi quadfleet=={__version__}",
             "group": "qf-workers: desired 3", "instances": Counter({("InService", "spot"): 3}), "busy": 0,
             "types": Counter({"c7g.2xlarge": 3}), "interruptions": 0,
             "code": Counter({f"sha256:{digest}": 2, f"pypi quadfleet=={__version__}": 1})}
    console = Console(width=400, record=True)
    console.print(status_table(state, "qf"))
    shown = " ".join(console.export_text().split())
    assert f"code run │ sha256:{digest} x2, pypi quadfleet=={__version__} x1 (a mixed fleet" in shown, shown


def test_fleet_up_with_a_given_queue_and_bucket_makes_neither(aws):
    url, _dlq = aws.create_queue("mine")
    queues = set(aws.sqs.list_queues()["QueueUrls"])
    aws.fleet("up", "--stack", "ext", "--queue-url", url, "--out", "s3://out/runs/", "--package-prefix", "s3://crawl/code")
    out = aws.outputs("ext")
    assert set(aws.sqs.list_queues()["QueueUrls"]) == queues
    assert {b["Name"] for b in aws.s3.list_buckets()["Buckets"]} == {"crawl", "out"}
    assert out["Out"] == "s3://out/runs" and out["QueueName"] == "mine" and out["QueueCreated"] == "false"
    statements = {st["Sid"]: st for st in aws.role_statements("ext")}
    assert statements["ReadWriteOutput"]["Resource"] == "arn:aws:s3:::out/runs/*"
    assert statements["WorkTheQueue"]["Resource"] == f"arn:aws:sqs:{REGION}:{ACCOUNT}:mine"
    assert statements["DeadLetter"]["Resource"] == f"arn:aws:sqs:{REGION}:{ACCOUNT}:mine-dlq"
    assert f"--queue-url https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/mine " in aws.user_data("ext")
    # --package-prefix: the code goes there (read only for the workers), not under the output bucket
    digest = aws.outputs("ext")["Code"].split(":", 1)[1]
    assert aws.s3.list_objects_v2(Bucket="crawl", Prefix=f"code/{digest}/SHA256SUMS")["KeyCount"] == 1
    assert f'base="s3://crawl/code/{digest}"' in aws.user_data("ext")
    assert statements["ReadCode"]["Resource"] == statements["CodeIsReadOnly"]["Resource"] == "arn:aws:s3:::crawl/code/*"

    said = aws.fleet("down", "--stack", "ext").stderr
    assert f"kept the queue {out['QueueUrl']}" in said and "kept the results in s3://out/runs" in said
    assert set(aws.sqs.list_queues()["QueueUrls"]) == queues
    # asked to, down deletes the queue it worked, given or made (here given, and the stack is gone: by tag
    # only, so a queue the fleet did not make stays)
    said = aws.fleet("down", "--stack", "ext", "--delete-queue", ok=False)
    assert said.returncode == 2 and "no stack ext" in said.stderr
    assert set(aws.sqs.list_queues()["QueueUrls"]) == queues
    aws.fleet("up", "--stack", "ext", "--queue-url", url, "--out", "s3://out/runs/", "--from-pypi", __version__)
    said = aws.fleet("down", "--stack", "ext", "--delete-queue").stderr
    assert "deleted the queue mine" in said and "deleted the queue mine-dlq" in said
    assert not aws.sqs.list_queues().get("QueueUrls")
    assert {b["Name"] for b in aws.s3.list_buckets()["Buckets"]} == {"crawl", "out"}


# -- down ---------------------------------------------------------------------------------------------------------

def test_fleet_down_removes_the_workers_and_keeps_the_queue_and_the_results(aws):
    aws.fleet("up", "--stack", "qf", "--size", "3", "--from-pypi", __version__)
    out = aws.outputs("qf")
    bucket, url = out["OutputBucket"], out["QueueUrl"]
    group = aws.group("qf-workers")
    ids = [i["InstanceId"] for i in group["Instances"]]
    assert len(ids) == 3
    # a busy worker's instance is protected from scale-in: down must stop it all the same
    aws.asg.set_instance_protection(AutoScalingGroupName="qf-workers", InstanceIds=ids[:1], ProtectedFromScaleIn=True)
    aws.sqs.send_message(QueueUrl=url, MessageBody="left over")
    aws.s3.put_object(Bucket=bucket, Key="run/done/x", Body=b"")
    resources = {r["LogicalResourceId"]: r["PhysicalResourceId"]
                 for r in aws.cfn.list_stack_resources(StackName="qf")["StackResourceSummaries"]}

    said = aws.fleet("down", "--stack", "qf").stderr
    assert "stopping 3 instances" in said and "kept the queue" in said and "kept the results" in said
    stacks = [s for s in aws.cfn.list_stacks()["StackSummaries"] if s["StackName"] == "qf"]
    assert {s["StackStatus"] for s in stacks} == {"DELETE_COMPLETE"}
    assert aws.group("qf-workers") is None
    assert {aws.state(i) for i in ids} == {"terminated"}
    assert not aws.ec2.describe_launch_templates(
        Filters=[{"Name": "launch-template-id", "Values": [resources["LaunchTemplate"]]}])["LaunchTemplates"]
    assert resources["InstanceRole"] not in {r["RoleName"] for r in aws.iam.list_roles()["Roles"]}
    # kept: the queues with their messages, the bucket with its results
    assert aws.counts(aws.sqs.get_queue_url(QueueName="qf-work")["QueueUrl"]) == (1, 0)
    aws.sqs.get_queue_url(QueueName="qf-work-dlq")
    assert aws.keys(f"s3://{bucket}/run") == {"done/x"}

    # up again: the same queue and bucket, found by the queue's tags
    said = aws.fleet("up", "--stack", "qf", "--size", "1", "--from-pypi", __version__).stderr
    assert "using the queue qf-work kept by an earlier `fleet down`" in said
    again = aws.outputs("qf")
    assert again["QueueName"] == "qf-work" and again["Out"] == f"s3://{bucket}"
    assert {b["Name"] for b in aws.s3.list_buckets()["Buckets"]} == {"crawl", "out", bucket}

    # down --delete-queue: the queues this fleet made go, the results stay
    said = aws.fleet("down", "--stack", "qf", "--delete-queue").stderr
    assert "deleted the queue qf-work" in said and "deleted the queue qf-work-dlq" in said
    assert not aws.sqs.list_queues().get("QueueUrls")
    assert aws.keys(f"s3://{bucket}/run") == {"done/x"}


def test_fleet_scale_stops_busy_surplus_instances(aws):
    aws.fleet("up", "--stack", "qf", "--size", "3", "--from-pypi", __version__)
    ids = [i["InstanceId"] for i in aws.group("qf-workers")["Instances"]]
    aws.asg.set_instance_protection(AutoScalingGroupName="qf-workers", InstanceIds=ids[:2], ProtectedFromScaleIn=True)
    said = aws.fleet("scale", "--stack", "qf", "1").stderr
    assert "desired 1 (was 3 running; stopped 1 busy" in said
    group = aws.group("qf-workers")
    assert group["DesiredCapacity"] == 1 and len(group["Instances"]) == 1
    res = aws.fleet("scale", "--stack", "qf", "21", ok=False)
    assert res.returncode == 2 and "above the group's MaxSize 20" in res.stderr


# -- errors: one line each, nothing half made -----------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["up", "--stack", "9lives"], "a stack name is a letter"),
    (["up", "--stack", "qf", "--instance-types", "c7g.xlarge,c7a.xlarge"], "mixes arm64 (c7g.xlarge) and x86_64"),
    (["up", "--stack", "qf", "--instance-types", "c7a"], "is not an instance type"),
    (["up", "--stack", "qf", "--instance-types", ",".join(["c7a.large"] * 9)], "give 1 to 8 instance types"),
    (["up", "--stack", "qf", "--max-size", "0"], "--max-size: MaxSize must be at least 1, not 0"),
    (["up", "--stack", "qf", "--out", "s3://Bad_Bucket/x"], "--out (bucket): OutputBucketName 'Bad_Bucket'"),
    (["up", "--stack", "qf", "--idle-exit", "5"], "IdleExitSeconds must be at least 10"),
    (["up", "--stack", "qf", "--size", "5", "--max-size", "4"], "--size 5 is above --max-size 4"),
    (["up", "--stack", "qf", "--queue-url", "https://sqs.us-east-1.amazonaws.com/123456789012/nope"],
     "cannot read the queue"),
    (["scale", "--stack", "qf", "2"], "no stack qf"),
    (["down", "--stack", "qf"], "no stack qf (nothing to take down)"),
])
def test_bad_requests_are_refused_in_one_line(aws, monkeypatch, capsys, args, message):
    from quadfleet.worker import aws as aws_mod

    from quadfleet import cli

    # in this process (the same CLI, without a process start per case), pointed at the moto server
    for key in [k for k in os.environ if k.upper().startswith("AWS_")]:
        monkeypatch.delenv(key)
    for key, value in aws.env.items():
        monkeypatch.setenv(key, value)
    aws_mod._client.cache_clear()
    try:
        code = cli.main(["fleet", *args])
    finally:
        aws_mod._client.cache_clear()
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quadfleet: ") and message in lines[0], err
    assert not [s for s in aws.cfn.list_stacks()["StackSummaries"] if s["StackStatus"] != "DELETE_COMPLETE"]


def test_missing_credentials_are_one_line(tmp_path):
    env = fleet_env("http://127.0.0.1:9")  # nothing listens: no request may be needed to say it
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        env.pop(key)
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "status", "--stack", "qf"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2
    assert res.stderr.strip() == ("quadfleet: stack qf: no AWS credentials found (set them in the environment, a "
                                  "profile, or an instance role)")


class StubCfn:
    """CloudFormation as it answers for a stack whose creation failed (moto never gets there)."""

    def __init__(self, status: str):
        self.status = status
        self.created = []

    def describe_stacks(self, StackName):
        return {"Stacks": [{"StackName": StackName, "StackStatus": self.status, "Outputs": []}]}

    def describe_stack_events(self, StackName):
        now = datetime.now(timezone.utc)
        return {"StackEvents": [
            {"EventId": "2", "LogicalResourceId": StackName, "ResourceStatus": self.status, "Timestamp": now},
            {"EventId": "1", "LogicalResourceId": "WorkerGroup", "ResourceStatus": "CREATE_FAILED", "Timestamp": now,
             "ResourceStatusReason": "You have requested more vCPU capacity than your current vCPU limit of 32"}]}

    def create_stack(self, **kw):  # pragma: no cover - must not be reached
        self.created.append(kw)


@pytest.mark.parametrize("status, says", [
    ("ROLLBACK_COMPLETE", "delete it with `quadfleet fleet down --stack qf`"),
    ("UPDATE_ROLLBACK_FAILED", "continue-update-rollback"),
    ("CREATE_IN_PROGRESS", "wait until it is done"),
])
def test_a_stack_in_a_failed_state_is_explained(monkeypatch, capsys, status, says):
    from quadfleet import cli

    stub = StubCfn(status)
    monkeypatch.setattr(fleet_mod, "fleet_client", lambda service, region: stub)
    for key, value in fleet_env("http://127.0.0.1:9").items():  # a region and credentials: checked first
        if key.startswith("AWS_"):
            monkeypatch.setenv(key, value)
    assert cli.main(["fleet", "up", "--stack", "qf"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and status in err and says in err, err
    if status != "CREATE_IN_PROGRESS":
        assert "WorkerGroup: You have requested more vCPU capacity" in err
    assert not stub.created


def test_cost_model():
    """Compute from pages/s and the price; the total adds the measured requests and storage
    (tests/fleet/test_fleet_cost.py holds those to a real run)."""
    c = crawl_cost(load(), 300, PriceBasis(vcpu_hour=0.0125))
    assert round(c.vcpu_hours) == 2778 and round(c.compute, 2) == 34.72 and round(c.machine_hours) == 347
    assert c.total > c.compute
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", "fleet", "cost", "--pages-per-s", "300",
                          "--price", "0.0125", "--markdown"], capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 0 and f"| 300 | 2,778 | 347 | 3.5 | ${c.total:,.0f} |" in res.stdout, res.stdout


# -- the worker in the group --------------------------------------------------------------------------------

def start_worker(aws: Aws, queue_url: str, instance_id: str, processes: int, idle_exit: float | None):
    args = ["work", "--queue-url", queue_url, "--processes", str(processes), "--config", str(aws.config),
            "--asg-instance-id", instance_id, "--asg-group", "qf-workers"]
    if idle_exit is not None:
        args += ["--idle-exit", str(idle_exit)]
    return aws.start(*args)


def enqueue_slow(aws: Aws, out: dict, pages: int = 250) -> str:
    archive = build_slow_archive(aws.tmp / "slow.warc.gz", pages=pages)
    uri = aws.put("crawl", "slow/slow.warc.gz", archive)
    aws.enqueue(out["QueueUrl"], f"{out['Out']}/run", uri)
    return uri


def test_a_busy_worker_protects_its_instance_and_an_idle_one_leaves_the_group(aws):
    aws.fleet("up", "--stack", "qf", "--size", "2", "--from-pypi", __version__)
    out = aws.outputs("qf")
    mine, other = [i["InstanceId"] for i in aws.group("qf-workers")["Instances"]]
    uri = enqueue_slow(aws, out)

    worker = start_worker(aws, out["QueueUrl"], mine, processes=2, idle_exit=3)
    wait_until(lambda: aws.protected(mine), 30, "the busy instance to be protected from scale-in")
    assert aws.protected(other) is False
    wait_until(lambda: aws.protected(mine) is False, 60, "protection to go once the instance is idle")
    assert worker.wait(60) == 0, worker.log()

    assert f"done/{input_id_of(uri)}" in aws.keys(f"{out['Out']}/run")  # the work was committed
    log = worker.log()
    assert f"protected {mine} from scale-in in qf-workers" in log
    assert f"unprotected {mine} from scale-in in qf-workers" in log
    assert f"idle: {mine} leaves qf-workers" in log
    assert log.count(f"protected {mine} from scale-in") == 2  # once on, once off: transitions only
    group = aws.group("qf-workers")
    assert [i["InstanceId"] for i in group["Instances"]] == [other]  # left, and not replaced
    assert group["DesiredCapacity"] == 1
    assert aws.protected(mine) is None and aws.state(mine) == "terminated"


def test_a_stopped_worker_only_drops_the_protection(aws):
    aws.fleet("up", "--stack", "qf", "--size", "1", "--from-pypi", __version__)
    out = aws.outputs("qf")
    (mine,) = [i["InstanceId"] for i in aws.group("qf-workers")["Instances"]]
    enqueue_slow(aws, out, pages=1500)

    worker = start_worker(aws, out["QueueUrl"], mine, processes=1, idle_exit=None)
    wait_until(lambda: aws.protected(mine), 30, "the busy instance to be protected from scale-in")
    worker.kill(signal.SIGTERM)
    assert worker.wait(30) == 0, worker.log()
    assert aws.protected(mine) is False  # unprotected, still in the group: the group decides what comes next
    group = aws.group("qf-workers")
    assert group["DesiredCapacity"] == 1 and [i["InstanceId"] for i in group["Instances"]] == [mine]
    assert "leaves" not in worker.log()
    wait_until(lambda: aws.counts(out["QueueUrl"]) == (1, 0), 10, "the message to be released")


def test_membership_comes_from_the_metadata_service():
    from quadfleet.worker.queue import asg

    imds = FakeImds()
    try:
        assert asg.discover(imds.url) is None  # no instance id, no group tag: not in a group
        imds.metadata.update({"instance-id": "i-0123456789abcdef0", "placement/region": "eu-west-1"})
        assert asg.discover(imds.url) is None  # on EC2, but in no group
        imds.metadata["tags/instance/aws:autoscaling:groupName"] = "qf-workers"
        assert asg.discover(imds.url) == asg.Membership("i-0123456789abcdef0", "qf-workers", "eu-west-1")
        assert asg.discover("off") is None
    finally:
        imds.close()
    from quadfleet.worker.queue.spot import on_ec2

    if not on_ec2():
        assert asg.discover("auto") is None  # off EC2: decided from local files, no request at all


@pytest.mark.parametrize("argv", [
    ["queue", "create", "qf-local"],
    ["enqueue", "--queue-url", "http://127.0.0.1:9/000000000000/q", "--out", "s3://b/run", "w.warc.gz"],
    ["work", "--queue-url", "http://127.0.0.1:9/000000000000/q", "--idle-exit", "1"],
    ["redrive", "--queue-url", "http://127.0.0.1:9/000000000000/q"],
    ["status", "--queue-url", "http://127.0.0.1:9/000000000000/q", "--out", "s3://b/run"],
    ["fleet", "status", "--stack", "qf"],
])
@pytest.mark.parametrize("credentials", [True, False])
def test_no_region_is_one_line_before_any_work_on_every_aws_command(tmp_path, argv, credentials):
    """Issue 24 defect 1: without a region these ended in botocore's NoRegionError traceback (and hid the
    missing credentials). Now one line naming what is missing and how to set it, exit 2, nothing sent (the
    endpoint does not listen)."""
    env = fleet_env("http://127.0.0.1:9")
    gone = ("AWS_REGION", "AWS_DEFAULT_REGION") + (() if credentials else ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"))
    for key in gone:
        env.pop(key, None)
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    res = subprocess.run([sys.executable, "-m", "quadfleet.cli", *argv, "--endpoint-url", "http://127.0.0.1:9"],
                         env=env, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert "no AWS region: give --region, set AWS_REGION" in res.stderr
    assert ("no AWS credentials found" in res.stderr) == (not credentials), res.stderr


# -- the code a fleet runs (issue 27): shipped by `fleet up`, checked, installed without an index -------------

def _install_function(user_data: str) -> str:
    """The user data's own install_quadfleet function, as the instances run it."""
    import textwrap

    lines = user_data.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("install_quadfleet() {"))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return textwrap.dedent("\n".join(lines[start:end + 1]))


def _offline_env(tmp_path: Path) -> dict:
    """No package index reachable for pip: --no-index in the commands, and any index or proxy it might try a
    closed port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_CONFIG_FILE=os.devnull,
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", PIP_NO_CACHE_DIR="1",
               HOME=str(tmp_path))
    py = Path(sys.executable).resolve().parent  # python3.11 (the instances' version) of this environment
    env["PATH"] = f"{py}:{env.get('PATH', '')}"
    return env


def _fetch_shipment(aws, bucket: str, prefix: str, into: Path) -> None:
    """As the user data does: SHA256SUMS, then only the files it names."""
    into.mkdir()
    sums = aws.s3.get_object(Bucket=bucket, Key=f"{prefix}/SHA256SUMS")["Body"].read()
    (into / "SHA256SUMS").write_bytes(sums)
    for line in sums.decode().splitlines():
        name = line.split("  ", 1)[1]
        aws.s3.download_file(bucket, f"{prefix}/{name}", str(into / name))


@pytest.mark.skipif(sys.version_info[:2] != (3, 11) or not shutil.which("sha256sum"),
                    reason="the shipped wheelhouse is for CPython 3.11 (the instances'), installed with sha256sum")
def test_the_shipped_code_installs_offline_as_the_instances_do_and_a_changed_file_stops_it(aws, tmp_path):
    import time

    aws.fleet("up", "--stack", "qf", "--out", "s3://out/runs")
    digest = aws.outputs("qf")["Code"].split(":", 1)[1]
    function = _install_function(aws.user_data("qf"))
    assert "--no-index" in function and "sha256sum --check --strict" in function
    code = tmp_path / "code"
    _fetch_shipment(aws, "out", f".quadfleet-code/{digest}", code)
    env = _offline_env(tmp_path)

    def install(folder: Path, venv: Path, sums: str = digest) -> subprocess.CompletedProcess:
        script = f"set -euo pipefail\n{function}\ninstall_quadfleet {folder} {sums} {venv}\n"
        script = script.replace("python3.11 -m venv", f"{sys.executable} -m venv")  # this machine's 3.11
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=900)

    started = time.monotonic()
    res = install(code, tmp_path / "venv")
    seconds = time.monotonic() - started
    assert res.returncode == 0, res.stdout + res.stderr
    quadfleet = tmp_path / "venv" / "bin" / "quadfleet"
    version = subprocess.run([str(quadfleet), "--version"], capture_output=True, text=True, env=env)
    lines = version.stdout.splitlines()
    assert lines and lines[0] == f"quadfleet {__version__}", version.stdout + version.stderr
    source = hashlib.sha256((code / f"quadfleet-{__version__}.tar.gz").read_bytes()).hexdigest()
    assert lines[1].split() == ["package", f"quadfleet-{__version__}.tar.gz", f"sha256:{source}", "(SHA256SUMS",
                                f"sha256:{digest})"]
    assert all(line.split()[-1] == "native" for line in lines[2:-1]), version.stdout  # the C modules were built
    assert lines[-1].split()[0] == "allocator", version.stdout  # (reported, not required)
    work = subprocess.run([str(quadfleet), "work", "--help"], capture_output=True, text=True, env=env)
    assert work.returncode == 0 and "--queue-url" in work.stdout
    assert not (tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "matplotlib").exists()
    print(f"offline install of the shipped code: {seconds:.1f} s")

    # one uploaded file changed on S3: fetched as the user data does, its check fails and nothing is installed
    wheel = next(code.glob("rich-*.whl"))
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 1
    aws.s3.put_object(Bucket="out", Key=f".quadfleet-code/{digest}/{wheel.name}", Body=bytes(data))
    bad = tmp_path / "bad"
    _fetch_shipment(aws, "out", f".quadfleet-code/{digest}", bad)
    res = install(bad, tmp_path / "venv-bad")
    assert res.returncode != 0 and f"{wheel.name}: FAILED" in res.stdout + res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "venv-bad").exists()
    # a SHA256SUMS that lists another digest for a changed file: refused by the digest the stack was given
    (bad / "SHA256SUMS").write_text((code / "SHA256SUMS").read_text().replace(
        hashlib.sha256((code / wheel.name).read_bytes()).hexdigest(), hashlib.sha256(bytes(data)).hexdigest()))
    res = install(bad, tmp_path / "venv-bad")
    assert res.returncode != 0 and "SHA256SUMS: FAILED" in res.stdout + res.stderr
    assert not (tmp_path / "venv-bad").exists()


def test_the_source_archive_is_the_same_bytes_for_the_same_tree(tmp_path):
    """The shipped source: the tracked files, in a tar without owners or times, so the same tree gives the
    same digest (and `fleet up` again uploads nothing); a file git does not track is named, not shipped."""
    import tarfile

    from quadfleet.coordinator.fleet import ship

    root = ship.source_root()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first, second = ship.source_archive(root, __version__, a), ship.source_archive(root, __version__, b)
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        names = tar.getnames()
        assert all(m.mtime == 0 and m.uid == 0 and not m.uname for m in tar.getmembers())
    tracked = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True).stdout.split()
    assert sorted(names) == sorted(f"quadfleet-{__version__}/{n}" for n in tracked if (root / n).is_file())
    stray = root / "worker" / "zz_untracked_for_test.py"
    stray.write_text("x = 1\n")
    try:
        assert "worker/zz_untracked_for_test.py" in ship.untracked(root)
    finally:
        stray.unlink()
