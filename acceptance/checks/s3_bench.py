"""PUT/GET throughput, multipart upload, listing and integrity against an S3-compatible
endpoint (boto3); prints one JSON object.

    python s3_bench.py --endpoint URL --bucket B --prefix P --object-size BYTES --objects N
                       --multipart-size BYTES --part-size BYTES --concurrency C [--create-bucket]

Credentials come from the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile or
an instance role), never from the command line. Every object carries random data whose
SHA-256 is compared after reading it back; uploads send Content-MD5 so the server checks
them too. The objects are deleted at the end.
"""

import argparse
import base64
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def emit(doc):
    json.dump({"bench": "slakit-s3/1", **doc}, sys.stdout)
    sys.stdout.write("\n")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", default=None)
    ap.add_argument("--region", default="us-east-1")
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", default="slakit-acceptance/")
    ap.add_argument("--object-size", type=int, default=8 * 1024 * 1024)
    ap.add_argument("--objects", type=int, default=16)
    ap.add_argument("--multipart-size", type=int, default=64 * 1024 * 1024)
    ap.add_argument("--part-size", type=int, default=8 * 1024 * 1024)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--create-bucket", action="store_true")
    ap.add_argument("--no-verify-tls", action="store_true")
    args = ap.parse_args(argv)
    base = {"objects": args.objects, "object_size": args.object_size, "endpoint": args.endpoint,
            "bucket": args.bucket}
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError as exc:
        emit({**base, "error": f"boto3 is not installed: {exc}", "error_kind": "no_boto3"})
        return 0
    s3 = boto3.client(
        "s3", endpoint_url=args.endpoint, region_name=args.region, verify=not args.no_verify_tls,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}, max_pool_connections=max(10, args.concurrency),
                      s3={"addressing_style": "path"}),
    )
    errors = []
    try:
        if args.create_bucket:
            try:
                s3.head_bucket(Bucket=args.bucket)
            except ClientError:
                s3.create_bucket(Bucket=args.bucket)
        else:
            s3.head_bucket(Bucket=args.bucket)
    except (BotoCoreError, ClientError) as exc:
        emit({**base, "error": str(exc)[:500], "error_kind": "unreachable"})
        return 0

    run = f"{args.prefix}{os.getpid()}-{int(time.time())}/"
    payloads = {f"{run}obj-{i:05d}": os.urandom(args.object_size) for i in range(args.objects)}
    digests = {k: hashlib.sha256(v).hexdigest() for k, v in payloads.items()}

    def put(key):
        body = payloads[key]
        md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
        s3.put_object(Bucket=args.bucket, Key=key, Body=body, ContentMD5=md5)

    def get(key):
        data = s3.get_object(Bucket=args.bucket, Key=key)["Body"].read()
        return key, len(data), hashlib.sha256(data).hexdigest()

    doc = dict(base)
    try:
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            t0 = time.perf_counter()
            list(pool.map(put, payloads))
            doc["put_s"] = time.perf_counter() - t0
            doc["put_bytes"] = args.object_size * args.objects
            t0 = time.perf_counter()
            got = list(pool.map(get, payloads))
            doc["get_s"] = time.perf_counter() - t0
            doc["get_bytes"] = sum(n for _, n, _ in got)
        doc["integrity_errors"] = sorted(k for k, n, h in got if h != digests[k] or n != args.object_size)
    except (BotoCoreError, ClientError) as exc:
        errors.append(f"put/get: {exc}"[:500])

    mp_key = f"{run}multipart"
    mp = {"size": args.multipart_size, "part_size": args.part_size}
    try:
        body = os.urandom(args.multipart_size)
        t0 = time.perf_counter()
        up = s3.create_multipart_upload(Bucket=args.bucket, Key=mp_key)
        parts = []
        for n, off in enumerate(range(0, len(body), args.part_size), start=1):
            chunk = body[off:off + args.part_size]
            r = s3.upload_part(Bucket=args.bucket, Key=mp_key, UploadId=up["UploadId"], PartNumber=n, Body=chunk,
                               ContentMD5=base64.b64encode(hashlib.md5(chunk).digest()).decode())
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
        s3.complete_multipart_upload(Bucket=args.bucket, Key=mp_key, UploadId=up["UploadId"],
                                     MultipartUpload={"Parts": parts})
        mp["seconds"] = time.perf_counter() - t0
        mp["parts"] = len(parts)
        data = s3.get_object(Bucket=args.bucket, Key=mp_key)["Body"].read()
        mp["ok"] = hashlib.sha256(data).hexdigest() == hashlib.sha256(body).hexdigest()
    except (BotoCoreError, ClientError) as exc:
        mp["ok"] = False
        mp["error"] = str(exc)[:500]
    doc["multipart"] = mp

    try:
        t0 = time.perf_counter()
        count = 0
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args.bucket, Prefix=run):
            count += len(page.get("Contents", []))
        doc["list_s"] = time.perf_counter() - t0
        doc["list_count"] = count
        doc["expected_count"] = args.objects + 1
    except (BotoCoreError, ClientError) as exc:
        errors.append(f"list: {exc}"[:500])

    try:
        keys = list(payloads) + [mp_key]
        for i in range(0, len(keys), 1000):
            s3.delete_objects(Bucket=args.bucket, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]]})
    except (BotoCoreError, ClientError) as exc:
        errors.append(f"cleanup: {exc}"[:500])
    doc["errors"] = errors
    emit(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
