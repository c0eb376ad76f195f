/**
 * An API Gateway HTTP API event (payload format 2.0) as the plain request the preference core
 * reads: method, raw path, query, body (decoded when API Gateway base64-encoded it), and the two
 * headers it looks at.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { EndpointRequest } from '#core/email/preferences';

export function fromHttpApiEvent(event: APIGatewayProxyEventV2): EndpointRequest {
  const headers = Object.fromEntries(
    Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const body =
    event.body === undefined
      ? ''
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    query: { ...(event.queryStringParameters ?? {}) },
    body,
    contentType: headers['content-type'],
    acceptLanguage: headers['accept-language'],
  };
}
