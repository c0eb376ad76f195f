import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { audiencesTableKey, rulesTableKey, stateTableKey } from '#aws/table-layout';

/** Props of {@link StateTables}. */
export interface StateTablesProps {
  /** `aws-managed` (the aws/dynamodb key) or `customer-managed` (a key of this stack, rotated yearly). */
  readonly encryption: 'aws-managed' | 'customer-managed';
  /** Applies to the state table; the ops-edited tables are always retained. */
  readonly removalPolicy: RemovalPolicy;
}

const string = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

/**
 * The three tables (keys from functions/aws/table-layout.ts, which the adapters and the sandbox
 * use too). Rules and audiences are what ops teams write by hand: deletion protection and RETAIN,
 * whatever the stack's removal policy, so neither a `cdk destroy` nor a console slip deletes them.
 * All three have point-in-time recovery and KMS encryption; the state table expires ledger and
 * lease items through the TTL attribute.
 */
export class StateTables extends Construct {
  readonly rules: dynamodb.Table;
  readonly audiences: dynamodb.Table;
  readonly state: dynamodb.Table;
  /** The customer-managed key, when `encryption` is `customer-managed`. */
  readonly encryptionKey: kms.Key | undefined;

  constructor(scope: Construct, id: string, props: StateTablesProps) {
    super(scope, id);
    this.encryptionKey =
      props.encryption === 'customer-managed'
        ? new kms.Key(this, 'TablesKey', {
            description: 'news-alerts: encrypts the rules, audiences and state tables',
            enableKeyRotation: true,
            removalPolicy: RemovalPolicy.RETAIN,
          })
        : undefined;
    const encryption = this.encryptionKey
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: this.encryptionKey }
      : { encryption: dynamodb.TableEncryption.AWS_MANAGED };
    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...encryption,
    };
    const opsEdited = { ...common, deletionProtection: true, removalPolicy: RemovalPolicy.RETAIN };
    this.rules = new dynamodb.Table(this, 'Rules', {
      ...opsEdited,
      partitionKey: string(rulesTableKey.partitionKey),
    });
    this.audiences = new dynamodb.Table(this, 'Audiences', {
      ...opsEdited,
      partitionKey: string(audiencesTableKey.partitionKey),
    });
    this.state = new dynamodb.Table(this, 'State', {
      ...common,
      partitionKey: string(stateTableKey.partitionKey),
      sortKey: string(stateTableKey.sortKey),
      timeToLiveAttribute: stateTableKey.timeToLiveAttribute,
      // The watermark lives here: losing it means re-deciding where alerts resume.
      deletionProtection: props.removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy: props.removalPolicy,
    });
  }
}
