"""Artifact store backed by S3 (or any S3-compatible server) through boto3.

The sha256 of each object is stored in its user metadata (``x-amz-meta-sha256``);
a GET returns data and metadata of the same object version, so reads verify atomically.
Every boto3/botocore failure is re-raised as a one-line ArtifactError naming the URI.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import boto3
from boto3.exceptions import S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    PartialCredentialsError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from benchforge.core.artifacts.base import (
    ArtifactInfo,
    ArtifactStore,
    commit_temp,
    hash_file,
    hash_stream,
    is_valid_key,
    join_key,
    normalize_prefix,
    temp_file_next_to,
    validate_key,
)
from benchforge.core.errors import ArtifactError, ArtifactNotFound, ChecksumMismatch
from benchforge.core.settings import BenchforgeSettings, load_settings

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef
else:
    S3Client = ObjectIdentifierTypeDef = Any

SHA256_META = "sha256"
_DELETE_BATCH = 1000
_LIST_WORKERS = 16
_NOT_FOUND = {"404", "NoSuchKey", "NotFound"}
_DENIED = {"403", "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch"}


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """Split ``s3://bucket/prefix`` into (bucket, normalized prefix)."""
    if not uri.startswith("s3://"):
        raise ArtifactError(f"not an S3 URI: {uri!r}")
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    if not bucket:
        raise ArtifactError(f"invalid S3 URI {uri!r}: missing bucket name")
    try:
        return bucket, normalize_prefix(prefix)
    except ArtifactError as exc:
        raise ArtifactError(f"invalid S3 URI {uri!r}: {exc}") from None


def make_s3_client(settings: BenchforgeSettings) -> S3Client:
    """Create an S3 client from settings (unset credentials fall back to boto3's chain)."""
    key_id = settings.aws_access_key_id
    secret = settings.aws_secret_access_key
    session = boto3.session.Session(
        aws_access_key_id=key_id.get_secret_value() if key_id else None,
        aws_secret_access_key=secret.get_secret_value() if secret else None,
        region_name=settings.s3_region,
    )
    config = Config(
        retries={"max_attempts": 3, "mode": "standard"},
        connect_timeout=10,
        read_timeout=120,
        s3={"addressing_style": "path"} if settings.s3_endpoint_url else {},
    )
    try:
        return session.client("s3", endpoint_url=settings.s3_endpoint_url, config=config)
    except (BotoCoreError, ValueError) as exc:
        raise ArtifactError(f"cannot create S3 client: {exc}") from exc


class S3ArtifactStore(ArtifactStore):
    """Artifacts as objects under ``s3://bucket/prefix``."""

    def __init__(
        self,
        location: str,
        *,
        settings: BenchforgeSettings | None = None,
        client: S3Client | None = None,
        transfer_config: TransferConfig | None = None,
    ) -> None:
        self.bucket, self.prefix = parse_s3_uri(location)
        self._client = client if client is not None else make_s3_client(settings or load_settings())
        self._transfer = transfer_config or TransferConfig(
            multipart_threshold=8 * 1024 * 1024, multipart_chunksize=8 * 1024 * 1024
        )
        self._bucket_checked = False

    def __repr__(self) -> str:
        return f"S3ArtifactStore({self.root_uri!r})"

    @property
    def root_uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def _okey(self, key: str) -> str:
        return join_key(self.prefix, key)

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._okey(validate_key(key))}"

    # -- error translation -------------------------------------------------------------
    @contextmanager
    def _errors(self, action: str, uri: str) -> Iterator[None]:
        try:
            yield
        except ClientError as exc:
            self._raise_client_error(action, uri, exc)
        except S3UploadFailedError as exc:
            if isinstance(exc.__context__, ClientError):
                self._raise_client_error(action, uri, exc.__context__)
            raise ArtifactError(f"cannot {action} {uri}: {exc}") from exc
        except (NoCredentialsError, PartialCredentialsError) as exc:
            raise ArtifactError(
                f"cannot {action} {uri}: no usable AWS credentials ({exc})"
            ) from exc
        except BotoConnectionError as exc:
            endpoint = self._client.meta.endpoint_url
            raise ArtifactError(
                f"cannot {action} {uri}: S3 endpoint {endpoint} unreachable ({exc})"
            ) from exc
        except BotoCoreError as exc:
            raise ArtifactError(f"cannot {action} {uri}: {exc}") from exc

    def _raise_client_error(self, action: str, uri: str, exc: ClientError) -> NoReturn:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = str(error.get("Message", "")) or str(exc)
        if code == "NoSuchBucket":
            raise ArtifactError(
                f"cannot {action} {uri}: bucket '{self.bucket}' does not exist"
            ) from exc
        if code in _NOT_FOUND:
            self._check_bucket(action, uri)
            raise ArtifactNotFound(f"{uri}: no such artifact") from exc
        if code in _DENIED:
            raise ArtifactError(f"cannot {action} {uri}: access denied ({code})") from exc
        raise ArtifactError(f"cannot {action} {uri}: {code or 'error'}: {message}") from exc

    def _check_bucket(self, action: str, uri: str) -> None:
        """Tell a missing bucket from a missing key after a bodiless 404 (HEAD)."""
        if self._bucket_checked:
            return
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _NOT_FOUND or code == "NoSuchBucket":
                raise ArtifactError(
                    f"cannot {action} {uri}: bucket '{self.bucket}' does not exist"
                ) from exc
            return  # e.g. no ListBucket permission: assume the bucket is there
        except BotoCoreError:
            return
        self._bucket_checked = True

    # -- writing -----------------------------------------------------------------------
    def put_bytes(self, key: str, data: bytes) -> ArtifactInfo:
        uri = self.uri(key)
        sha = hashlib.sha256(data).hexdigest()
        with self._errors("upload to", uri):
            self._client.put_object(
                Bucket=self.bucket, Key=self._okey(key), Body=data, Metadata={SHA256_META: sha}
            )
        return ArtifactInfo(key=key, size=len(data), sha256=sha, uri=uri)

    def put_file(self, key: str, path: Path) -> ArtifactInfo:
        uri = self.uri(key)
        path = Path(path)
        sha, size = hash_file(path)
        with self._errors("upload to", uri):
            self._client.upload_file(
                str(path),
                self.bucket,
                self._okey(key),
                ExtraArgs={"Metadata": {SHA256_META: sha}},
                Config=self._transfer,
            )
        return ArtifactInfo(key=key, size=size, sha256=sha, uri=uri)

    # -- reading -----------------------------------------------------------------------
    def _expected_sha(self, uri: str, metadata: dict[str, str]) -> str:
        sha = metadata.get(SHA256_META)
        if not sha:
            raise ArtifactError(f"{uri}: no recorded sha256 (not written by benchforge?)")
        return sha

    def get_bytes(self, key: str) -> bytes:
        uri = self.uri(key)
        with self._errors("download", uri):
            resp = self._client.get_object(Bucket=self.bucket, Key=self._okey(key))
            data = resp["Body"].read()
        expected = self._expected_sha(uri, resp.get("Metadata", {}))
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise ChecksumMismatch(f"{uri}: content sha256 {actual} does not match {expected}")
        return data

    def get_file(self, key: str, dest: Path) -> Path:
        uri = self.uri(key)
        dest = Path(dest)
        try:
            with temp_file_next_to(dest) as (fh, tmp):
                with self._errors("download", uri):
                    resp = self._client.get_object(Bucket=self.bucket, Key=self._okey(key))
                    expected = self._expected_sha(uri, resp.get("Metadata", {}))
                    actual, _ = hash_stream(resp["Body"], fh)
                if actual != expected:
                    raise ChecksumMismatch(
                        f"{uri}: content sha256 {actual} does not match {expected}"
                    )
                commit_temp(fh, tmp)
                tmp.replace(dest)
        except OSError as exc:
            raise ArtifactError(f"cannot write {dest}: {exc.strerror or exc}") from exc
        return dest

    def _head(self, key: str) -> Any:
        uri = self.uri(key)
        with self._errors("inspect", uri):
            return self._client.head_object(Bucket=self.bucket, Key=self._okey(key))

    def exists(self, key: str) -> bool:
        try:
            self._head(key)
        except ArtifactNotFound:
            return False
        return True

    def info(self, key: str) -> ArtifactInfo:
        uri = self.uri(key)
        head = self._head(key)
        sha = self._expected_sha(uri, head.get("Metadata", {}))
        return ArtifactInfo(key=key, size=int(head["ContentLength"]), sha256=sha, uri=uri)

    def _object_keys(self, prefix: str) -> Iterator[str]:
        """Raw object keys under the store-relative folder ``prefix``."""
        full = self._okey(prefix) if prefix else self.prefix
        list_prefix = f"{full}/" if full else ""
        uri = f"s3://{self.bucket}/{list_prefix}"
        with self._errors("list", uri):
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=list_prefix
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    yield obj["Key"]

    def _rel(self, okey: str) -> str:
        return okey[len(self.prefix) + 1 :] if self.prefix else okey

    def list(self, prefix: str = "") -> builtins.list[ArtifactInfo]:
        prefix = normalize_prefix(prefix)
        keys = [k for k in map(self._rel, self._object_keys(prefix)) if is_valid_key(k)]

        def head(key: str) -> ArtifactInfo | None:
            try:
                return self.info(key)
            except ArtifactNotFound:
                return None  # deleted while we were listing

        if len(keys) <= 1:
            found = [head(k) for k in keys]
        else:
            with ThreadPoolExecutor(max_workers=min(_LIST_WORKERS, len(keys))) as pool:
                found = builtins.list(pool.map(head, keys))
        return sorted((i for i in found if i is not None), key=lambda i: i.key)

    # -- deleting ----------------------------------------------------------------------
    def delete(self, key: str) -> None:
        uri = self.uri(key)
        with self._errors("delete", uri):
            self._client.delete_object(Bucket=self.bucket, Key=self._okey(key))

    def delete_prefix(self, prefix: str) -> int:
        prefix = normalize_prefix(prefix)
        if not prefix:
            raise ArtifactError("delete_prefix needs a non-empty prefix")
        okeys = builtins.list(self._object_keys(prefix))
        uri = f"s3://{self.bucket}/{self._okey(prefix)}/"
        for start in range(0, len(okeys), _DELETE_BATCH):
            chunk = okeys[start : start + _DELETE_BATCH]
            batch: list[ObjectIdentifierTypeDef] = [{"Key": k} for k in chunk]
            with self._errors("delete", uri):
                resp = self._client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
                )
            if errors := resp.get("Errors"):
                first = errors[0]
                raise ArtifactError(
                    f"cannot delete s3://{self.bucket}/{first.get('Key')}: "
                    f"{first.get('Code')}: {first.get('Message')}"
                )
        return len(okeys)
