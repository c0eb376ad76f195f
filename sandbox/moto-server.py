"""moto server with two fixes to its DynamoDB backend, one to its SQS backend and two to its SNS backend
(moto 5.2.5, pinned in requirements.txt), for the sandbox, the tests and the bench; sandbox/moto.ts
starts moto through this file.

1. One DynamoDB request at a time. moto serves requests on threads without locking the backend:
   two concurrent UpdateItem ADDs to one item can lose one, and a transaction cancelled while
   another request writes restores a stale copy of the whole table. DynamoDB serializes writes
   to an item; a lock around each DynamoDB request gives the same results.
2. A cancelled TransactWriteItems puts back only the items it touched. moto deep-copies every
   table a transaction names before it starts (to restore it on cancellation): 1.4 s per
   transaction on a 5,000-item table, 5.3 s on 20,000, so a state table holding a day's ledger
   made every transaction seconds long.

3. SQS SendMessage and ReceiveMessage do not count the queue. moto builds every queue attribute,
   the approximate message counts among them (a pass over every message, reading the clock for
   each), to look up one setting on every message sent (ContentBasedDeduplication) and every
   message received (MessageRetentionPeriod): a queue of n messages made each call O(n) and a
   run queuing 2,000 work items quadratic (the publishing bench spent half of moto's time there).
   During those two calls the counts read as 0; GetQueueAttributes still counts.

4. The state dump (`/moto-api/data.json`, the only place moto shows what SNS sent to email and SMS)
   is built again when a concurrent request changed a backend while it was walked: moto iterates
   live sets and dicts and answered 500 (a walked set or dict changed size, or a value it had
   checked changed before the final JSON), about 1 dump in 25 while other tests worked, more on a
   loaded machine.

5. A failing http(s) subscriber does not fail the publish. moto posts to an http(s) subscriber inside
   every Publish, and a subscriber that refused the connection raised out of PublishBatch: the
   entry came back neither successful nor failed, the caller published it again, and every other
   subscriber of the topic got it once per attempt. SNS delivers to http(s) subscribers after
   accepting the message, and a failing one never fails the publish; here its post is logged and
   dropped (as SNS would after its retries), with a short timeout so a hung receiver holds the
   publish for seconds, not for ever. What the audit queue shows for such an audience is what SNS
   accepted, not what the dead subscriber received.

6. An http(s) subscriber asked for raw message delivery gets the message itself, as SNS sends it:
   moto posted the SNS envelope whatever the subscription said, so a consumer built against the
   sandbox would read another body than it gets from AWS. Every post carries SNS's headers
   (`x-amz-sns-message-type: Notification`, the message, topic and subscription ids, and
   `x-amz-sns-rawdelivery: true` when raw). moto confirms http(s) subscriptions itself: no
   SubscriptionConfirmation is posted.

It also stops werkzeug logging a line per request (a tenth of moto's time under the bench's load);
warnings and errors still reach stderr, which sandbox/moto.ts shows when moto fails to start.

It serves like `moto_server -H HOST -p PORT`, with one difference: `-p 0` lets the system pick a
free port while binding, and the first line on stdout, `listening on http://HOST:PORT`, says
which. sandbox/moto.ts starts it so: a port chosen beforehand and closed again could be taken by
another process before moto binds it (on a busy machine, one test run in 86 died of that).

1 and 2 matter since sharded publishing: publishers complete work items concurrently, each with a
transaction that ADDs to one dispatch head; 3 once a run queues thousands of work items. The patches touch moto internals, so they check the
shapes they rely on and fail loudly on another moto version instead of silently doing nothing.
"""
import argparse
import copy
import logging
import os
import signal
import sys
import threading

import moto.dynamodb.models as models
import moto.sns.models as sns_models
import requests
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.moto_api._internal.responses import MotoAPIResponse
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.sqs.models import Queue, SQSBackend
from werkzeug.serving import make_server

_COUNTS = (
    "approximate_number_of_messages",
    "approximate_number_of_messages_delayed",
    "approximate_number_of_messages_not_visible",
)

if (
    not hasattr(DynamoHandler, "call_action")
    or not hasattr(models.DynamoDBBackend, "transact_write_items")
    or not all(isinstance(getattr(Queue, name, None), property) for name in _COUNTS)
    or not hasattr(SQSBackend, "send_message")
    or not hasattr(SQSBackend, "is_message_valid_based_on_retention_period")
    or not hasattr(MotoAPIResponse, "model_data")
    or getattr(sns_models, "requests", None) is not requests
):
    raise SystemExit("sandbox/moto-server.py: this moto version lacks what the patches rely on; see requirements.txt")

_lock = threading.RLock()
_call_action = DynamoHandler.call_action


def _serialized_call_action(self, *args, **kwargs):
    with _lock:
        return _call_action(self, *args, **kwargs)


DynamoHandler.call_action = _serialized_call_action


class _NoTableCopy:
    """`copy` as moto's DynamoDB models see it: tables are not deep-copied (see 2.)."""

    @staticmethod
    def deepcopy(value, memo=None):
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def __getattr__(self, name):
        return getattr(copy, name)


models.copy = _NoTableCopy()
_transact_write_items = models.DynamoDBBackend.transact_write_items


def _transact_write_items_restoring_touched(self, transact_items):
    saved = []
    for entry in transact_items:
        _, op = next(iter(entry.items()))
        name = op.get("TableName")
        if name not in self.tables:
            continue
        table = self.tables[name]
        if "Key" in op:
            key = op["Key"]
        else:
            key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = op["Item"][table.range_key_attr]
        current = self.get_item(name, key)
        saved.append((name, key, None if current is None else copy.deepcopy(current.to_json()["Attributes"])))
    try:
        return _transact_write_items(self, transact_items)
    except Exception:
        for name, key, attributes in reversed(saved):
            if attributes is None:
                if self.get_item(name, key) is not None:
                    self.delete_item(name, key)
            else:
                self.put_item(name, attributes, overwrite=True)
        raise


models.DynamoDBBackend.transact_write_items = _transact_write_items_restoring_touched

# 3. Queue counts skipped while a message is sent or received (a flag per request thread).
_uncounted = threading.local()


def _count_unless_skipped(count):
    def read(queue):
        return 0 if getattr(_uncounted, "on", False) else count(queue)

    return property(read)


for _name in _COUNTS:
    setattr(Queue, _name, _count_unless_skipped(getattr(Queue, _name).fget))


def _without_counts(method):
    def call(self, *args, **kwargs):
        outer = getattr(_uncounted, "on", False)
        _uncounted.on = True
        try:
            return method(self, *args, **kwargs)
        finally:
            _uncounted.on = outer

    return call


SQSBackend.send_message = _without_counts(SQSBackend.send_message)
SQSBackend.is_message_valid_based_on_retention_period = _without_counts(
    SQSBackend.is_message_valid_based_on_retention_period
)

# 4. The state dump, built again while a concurrent change breaks the walk.
_model_data = MotoAPIResponse.model_data
_DUMP_ATTEMPTS = 50


def _model_data_retried(self, *args, **kwargs):
    for attempt in range(_DUMP_ATTEMPTS):
        try:
            return _model_data(self, *args, **kwargs)
        # A set or dict changed size while walked (RuntimeError), an entry went (KeyError,
        # IndexError), or a value passed moto's own JSON check and then changed (TypeError: a
        # DynamoDB item filled in between, keyed by DynamoType).
        except (RuntimeError, KeyError, IndexError, TypeError):
            if attempt == _DUMP_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


MotoAPIResponse.model_data = _model_data_retried

# 5. An http(s) subscriber's failure stays its own.
# (connect, read): a post happens inside the Publish, so a hung receiver may hold a PublishBatch of
# ten for at most ten times this.
_SUBSCRIBER_TIMEOUT_SECONDS = (1, 3)


class _SubscriberPosts:
    """`requests` as moto's SNS models see it: a post that fails is logged, never raised (see 5.)."""

    @staticmethod
    def post(url, **kwargs):
        kwargs.setdefault("timeout", _SUBSCRIBER_TIMEOUT_SECONDS)
        try:
            return requests.post(url, **kwargs)
        except requests.RequestException as error:
            # The URL is not logged: a webhook URL can be a credential. The topic names the
            # audience (`<prefix>-audience-<audienceId>`), so ops can tell whose subscriber fails.
            topic = (kwargs.get("headers") or {}).get("x-amz-sns-topic-arn", "an unknown topic")
            logging.getLogger("moto-server").warning(
                "SNS could not deliver to an http(s) subscriber of %s (%s); the publish still succeeds",
                topic,
                type(error).__name__,
            )
            return None

    def __getattr__(self, name):
        return getattr(requests, name)


sns_models.requests = _SubscriberPosts()

# 6. Raw message delivery to http(s) subscribers, and SNS's headers on every post.
_subscription_publish = sns_models.Subscription.publish


def _sns_headers(subscription, message_id, raw):
    headers = {
        "Content-Type": "text/plain; charset=UTF-8",
        "x-amz-sns-message-type": "Notification",
        "x-amz-sns-message-id": message_id,
        "x-amz-sns-topic-arn": subscription.topic.arn,
        "x-amz-sns-subscription-arn": subscription.arn,
    }
    if raw:
        headers["x-amz-sns-rawdelivery"] = "true"
    return headers


def _publish_http_as_sns(self, message, message_id, subject=None, message_attributes=None, *args, **kwargs):
    if self.protocol not in ("http", "https"):
        return _subscription_publish(self, message, message_id, subject, message_attributes, *args, **kwargs)
    if self._filter_policy_matcher is not None and not self._filter_policy_matcher.matches(message_attributes, message):
        return None
    structure = kwargs.get("message_structure", args[2] if len(args) > 2 else None)
    if structure == "json":
        message = self._parse_message_structure(message, self.protocol)
    raw = str(self.attributes.get("RawMessageDelivery", "false")).lower() == "true"
    if raw:
        sns_models.requests.post(self.endpoint, data=message.encode("utf-8"), headers=_sns_headers(self, message_id, True))
    else:
        post_data = self.get_post_data(message, message_id, subject)
        sns_models.requests.post(self.endpoint, json=post_data, headers=_sns_headers(self, message_id, False))
    return None


sns_models.Subscription.publish = _publish_http_as_sns

logging.getLogger("werkzeug").setLevel(logging.WARNING)


def serve(argv):
    """moto.server.main without the options the sandbox never uses, binding before it reports."""
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=0)
    args = parser.parse_args(argv)
    app = DomainDispatcherApplication(create_backend_app)
    app.debug = True
    # Binds and listens here: an address in use fails now, with werkzeug's own message.
    server = make_server(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)
    port = server.server_address[1]
    # moto builds some endpoint URLs from it (as moto.server.main sets it).
    os.environ.setdefault("MOTO_PORT", str(port))
    for name in (signal.SIGINT, signal.SIGTERM):
        signal.signal(name, lambda *_: sys.exit(0))
    print(f"listening on http://{args.host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1:])
