"""What an AWS request is, as the bill sees it: an HTTP request to S3 or SQS named by its operation
(PutObject, ListObjectsV2, ReceiveMessage, ...) and sorted into the price class AWS bills it in.

Apart from the proxy that counts them (:mod:`.counting`) so that the cost model (:mod:`.cost`) can name the
same classes without an HTTP server in sight.
"""
from __future__ import annotations

import enum
import json
from urllib.parse import parse_qs, unquote


class Billing(enum.Enum):
    """S3's request price classes (SQS has one price for every request)."""

    S3_PUT = "s3-put"    # PUT, COPY, POST, LIST: $0.005 per 1,000 in us-east-1
    S3_GET = "s3-get"    # GET, HEAD and every other request: $0.0004 per 1,000
    S3_FREE = "s3-free"  # DELETE and CANCEL (abort multipart): free
    SQS = "sqs"          # every request, per 64 KB chunk of its payload


# S3 operations billed in the PUT/COPY/POST/LIST class; DELETE and abort are free; the rest is GET class.
S3_PUT_CLASS = frozenset({"PutObject", "CopyObject", "UploadPart", "UploadPartCopy", "CreateMultipartUpload",
                          "CompleteMultipartUpload", "ListObjectsV2", "ListObjects", "ListParts",
                          "ListMultipartUploads", "CreateBucket", "PostObject"})
S3_FREE_CLASS = frozenset({"DeleteObject", "DeleteObjects", "AbortMultipartUpload"})


def billing(service: str, operation: str) -> Billing:
    """The price class of one request."""
    if service == "sqs":
        return Billing.SQS
    if operation in S3_PUT_CLASS:
        return Billing.S3_PUT
    return Billing.S3_FREE if operation in S3_FREE_CLASS else Billing.S3_GET


def sqs_action(headers: dict[str, str], query: str, body: bytes) -> str:
    """The SQS action of a request (JSON protocol: ``X-Amz-Target: AmazonSQS.<Action>``; query protocol:
    ``Action=``), or "" for a request that is not SQS's."""
    target = next((v for k, v in headers.items() if k.lower() == "x-amz-target"), "")
    if target:
        return target.rsplit(".", 1)[-1]
    found = parse_qs(query).get("Action")
    if not found and b"Action=" in body[:200]:
        found = parse_qs(body.decode("utf-8", "replace")).get("Action")
    return found[0] if found else ""


def s3_operation(method: str, path: str, query: str, headers: dict[str, str]) -> tuple[str, str, str]:
    """(operation, bucket, key) of a path-style S3 request (what boto3 sends to an endpoint URL)."""
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    q = parse_qs(query, keep_blank_values=True)
    lower = {k.lower() for k in headers}
    if method == "PUT":
        if not key:
            return "CreateBucket", bucket, key
        if "uploadId" in q:
            return ("UploadPartCopy" if "x-amz-copy-source" in lower else "UploadPart"), bucket, key
        return ("CopyObject" if "x-amz-copy-source" in lower else "PutObject"), bucket, key
    if method == "POST":
        if "uploads" in q:
            return "CreateMultipartUpload", bucket, key
        if "uploadId" in q:
            return "CompleteMultipartUpload", bucket, key
        return ("DeleteObjects" if "delete" in q else "PostObject"), bucket, key
    if method == "GET":
        if not key:
            if "uploads" in q:
                return "ListMultipartUploads", bucket, key
            return ("ListObjectsV2" if q.get("list-type") == ["2"] else "ListObjects"), bucket, key
        return ("ListParts" if "uploadId" in q else "GetObject"), bucket, key
    if method == "HEAD":
        return ("HeadObject" if key else "HeadBucket"), bucket, key
    if method == "DELETE":
        if not key:
            return "DeleteBucket", bucket, key
        return ("AbortMultipartUpload" if "uploadId" in q else "DeleteObject"), bucket, key
    return method, bucket, key


def sqs_messages(action: str, request: bytes, response: bytes) -> int:
    """Messages a ReceiveMessage answer carried, or entries a SendMessageBatch sent (1 for SendMessage);
    0 otherwise. JSON protocol, with the query protocol's XML counted by its tags."""
    if action == "ReceiveMessage":
        doc, key, tag = response, "Messages", b"<Message>"
    elif action == "SendMessageBatch":
        doc, key, tag = request, "Entries", b".Id="
    else:
        return 1 if action == "SendMessage" else 0
    try:
        found = json.loads(doc or b"{}")
    except ValueError:
        return doc.count(tag)
    return len(found.get(key) or []) if isinstance(found, dict) else 0
