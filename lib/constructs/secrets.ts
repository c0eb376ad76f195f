import { type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Props of {@link EmptySecret}. */
export interface EmptySecretProps {
  readonly description: string;
  /** Physical name, when other tools must find the secret by name. */
  readonly secretName?: string;
  readonly removalPolicy: RemovalPolicy;
  /** Why the value is not rotated by Secrets Manager (acknowledges AwsSolutions-SMG4). */
  readonly rotationNote: string;
}

/**
 * A secret created without any value: ops put the value with `put-secret-value` after the
 * deploy, so it never appears in the template, the cloud assembly or the CloudFormation console.
 * (CDK would otherwise generate a random password, which is no use for a third-party credential.)
 */
export class EmptySecret extends Construct {
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: EmptySecretProps) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: props.description,
      secretName: props.secretName,
      removalPolicy: props.removalPolicy,
    });
    // Neither SecretString nor GenerateSecretString: CloudFormation creates the secret empty.
    (this.secret.node.defaultChild as secretsmanager.CfnSecret).addPropertyDeletionOverride('GenerateSecretString');
    Validations.of(this.secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: props.rotationNote });
  }
}

/** Props of {@link ApiKeySecret}. */
export interface ApiKeySecretProps {
  /** Existing secret to use; undefined creates an empty one. */
  readonly existingSecretArn?: string | undefined;
  /** Customer-managed key of the existing secret, when it has one. */
  readonly existingSecretKmsKeyArn?: string | undefined;
  readonly removalPolicy: RemovalPolicy;
}

/** Secret ARNs end in `-` plus six random characters; a name alone does not. */
const completeArn = /-[A-Za-z0-9]{6}$/;

/**
 * Imports an existing secret by ARN. A complete ARN (with the random suffix) is matched exactly;
 * a partial one (name only) through the `-??????` suffix pattern in grants.
 */
export function importSecret(scope: Construct, id: string, arn: string): secretsmanager.ISecret {
  return completeArn.test(arn)
    ? secretsmanager.Secret.fromSecretCompleteArn(scope, id, arn)
    : secretsmanager.Secret.fromSecretPartialArn(scope, id, arn);
}

/**
 * The news provider's API key: a secret this stack creates empty, or an existing one imported by
 * ARN (for example one shared with other systems). Its value is never in the template.
 */
export class ApiKeySecret extends Construct {
  readonly secret: secretsmanager.ISecret;
  /** True when the stack created the (empty) secret and ops still have to put the key. */
  readonly createdEmpty: boolean;
  /** The customer-managed key of an existing secret and that secret's ARN, as configured. */
  readonly #customKey: { readonly keyArn: string; readonly secretArn: string } | undefined;

  constructor(scope: Construct, id: string, props: ApiKeySecretProps) {
    super(scope, id);
    if (props.existingSecretArn === undefined) {
      this.secret = new EmptySecret(this, 'ApiKey', {
        description: 'news-alerts: API key of the News Lookup Service (X-API-KEY). Put the key as the secret string.',
        removalPolicy: props.removalPolicy,
        rotationNote:
          'The provider issues the API key; no rotation function can obtain a new one. Ops rotate it by putting the new key (put-secret-value); the function re-reads the secret within SECRET_CACHE_SECONDS and right after a 401.',
      }).secret;
      this.createdEmpty = true;
    } else {
      this.secret = importSecret(this, 'ApiKey', props.existingSecretArn);
      this.createdEmpty = false;
    }
    const keyArn = props.existingSecretKmsKeyArn;
    const secretArn = props.existingSecretArn;
    this.#customKey = keyArn === undefined || secretArn === undefined ? undefined : { keyArn, secretArn };
  }

  /** Lets `grantee` read the key: GetSecretValue on this secret, and Decrypt through Secrets Manager only. */
  grantRead(grantee: iam.IGrantable): void {
    this.secret.grantRead(grantee);
    if (this.#customKey !== undefined) grantDecryptViaSecretsManager(this, grantee, this.#customKey);
  }
}

/**
 * Lets `grantee` decrypt with the customer-managed key of an existing secret, only when Secrets
 * Manager asks on its behalf (a GetSecretValue), and only for that secret: Secrets Manager puts the
 * secret's ARN in the encryption context of every data key it protects (`SecretARN`), so the
 * grant does not reach the other secrets the key may protect. A partial ARN (the name without
 * the `-` and six characters Secrets Manager adds) matches through the same `-??????` pattern
 * as the GetSecretValue grant.
 */
export function grantDecryptViaSecretsManager(
  scope: Construct,
  grantee: iam.IGrantable,
  { keyArn, secretArn }: { keyArn: string; secretArn: string },
): void {
  const viaService = { 'kms:ViaService': `secretsmanager.${Stack.of(scope).region}.amazonaws.com` };
  const secret = 'kms:EncryptionContext:SecretARN';
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [keyArn],
      conditions: completeArn.test(secretArn)
        ? { StringEquals: { ...viaService, [secret]: secretArn } }
        : { StringEquals: viaService, StringLike: { [secret]: `${secretArn}-??????` } },
    }),
  );
}
