/**
 * `email remove --forget` against a stack: the address also leaves SES's account-level suppression
 * list (cli/ses-suppression.ts), or an address that once bounced could never be mailed again. moto
 * has no suppression list, so the real SESv2 client talks to an in-process request handler that
 * answers as SES documents (DeleteSuppressedDestination: 200, or NotFoundException for an address
 * it does not hold); everything the client sends and parses is the SDK's own.
 */
import { Readable } from 'node:stream';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { forgetSubscriber } from '../../cli/email.ts';
import { ExitCode, OperationFailedError } from '../../cli/errors.ts';
import type { SubscriberProfile } from '../../functions/core/email/subscriber.ts';

const profile: SubscriberProfile = {
  subscriberId: '0a1b2c3d4e5f60718293',
  address: 'kim.lee@example.com',
  createdAt: 0,
  softBounces: 0,
  suppression: { reason: 'bounce', at: 0 },
};

interface Seen {
  method: string;
  path: string;
}

/** An SES that answers every request with `status` (and SES's error type when not 200). */
function sesAnswering(status: number, errorType?: string, message = '') {
  const seen: Seen[] = [];
  const client = new SESv2Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
    requestHandler: {
      metadata: { handlerProtocol: 'in-process' },
      async handle(request: { method: string; path: string }) {
        seen.push({ method: request.method, path: request.path });
        const body = errorType === undefined ? '{}' : JSON.stringify({ message });
        return {
          response: {
            statusCode: status,
            reason: '',
            headers: {
              'content-type': 'application/json',
              'x-amzn-requestid': 'test',
              ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }),
            },
            body: Readable.from([Buffer.from(body)]),
          },
        };
      },
    } as never,
  });
  return { client, seen };
}

function storeRecording() {
  const deleted: string[] = [];
  return { deleted, store: { deleteSubscriber: async (id: string) => void deleted.push(id) } };
}

const stack = { kind: 'stack', clients: { config: {} } } as never;

describe('email remove --forget and SES suppression', () => {
  it('takes the address off the suppression list, then deletes the records', async () => {
    const ses = sesAnswering(200);
    const { store, deleted } = storeRecording();
    await forgetSubscriber({ store, target: stack }, profile, { ses: ses.client });
    expect(deleted).toEqual([profile.subscriberId]);
    expect(ses.seen).toEqual([{ method: 'DELETE', path: '/v2/email/suppression/addresses/kim.lee%40example.com' }]);
  });

  it('is content when SES does not hold the address', async () => {
    const ses = sesAnswering(404, 'NotFoundException', `${profile.address} is not on the suppression list`);
    const { store, deleted } = storeRecording();
    await forgetSubscriber({ store, target: stack }, profile, { ses: ses.client });
    expect(deleted).toEqual([profile.subscriberId]);
    expect(ses.seen).toHaveLength(1);
  });

  it('when SES refuses, forgets nothing and says what to do, without the address', async () => {
    const ses = sesAnswering(
      403,
      'AccessDeniedException',
      `User is not authorized to perform ses:DeleteSuppressedDestination for ${profile.address}`,
    );
    const { store, deleted } = storeRecording();
    const failure = await forgetSubscriber({ store, target: stack }, profile, { ses: ses.client }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OperationFailedError);
    const error = failure as OperationFailedError;
    expect(error.exitCode).toBe(ExitCode.failed);
    expect(error.message).toMatch(/^nothing was forgotten: /);
    expect(error.message).toContain('AccessDeniedException');
    expect(error.message).toContain(
      `--keep-ses-suppression to delete subscriber ${profile.subscriberId}'s records alone`,
    );
    expect(error.cause).toBeUndefined();
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('kim.lee');
    // Nothing deleted: run again (by id) once allowed.
    expect(deleted).toEqual([]);
    // --keep-ses-suppression: the records alone, SES not asked.
    const asked = ses.seen.length;
    await forgetSubscriber({ store, target: stack }, profile, { ses: ses.client, keepSesSuppression: true });
    expect(deleted).toEqual([profile.subscriberId]);
    expect(ses.seen).toHaveLength(asked);
  });

  it('leaves SES alone in the sandbox, whose SES keeps no suppression list', async () => {
    const ses = sesAnswering(500, 'InternalFailure');
    const { store, deleted } = storeRecording();
    await forgetSubscriber({ store, target: { kind: 'local', clients: { config: {} } } as never }, profile, {
      ses: ses.client,
    });
    expect(deleted).toEqual([profile.subscriberId]);
    expect(ses.seen).toEqual([]);
  });
});
