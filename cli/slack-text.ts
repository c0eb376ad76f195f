/**
 * A Slack message as the relay would post it (functions/slack-relay: parse the structured alert,
 * render Block Kit blocks) and as a person would read it: its blocks' text, one line each. Used by
 * `deliveries` (what a Slack subscriber received) and `preview --channel slack` (what it would
 * receive), so both show exactly the relay's rendering.
 */

/** What the relay would post for an alert document, and its text; why not, when it would refuse it. */
export interface SlackRendering {
  /** The blocks' text, one line each, or why the relay would refuse the message. */
  readonly text: string;
  /** The webhook body the relay would post (`{text, blocks}`), or null when it would refuse it. */
  readonly json: unknown;
}

/** Renders the structured alert document `body` (what SNS gives the relay) as the relay would. */
export async function slackRendering(body: string): Promise<SlackRendering> {
  try {
    // Loaded only when a Slack message is shown: the relay's renderer is not needed elsewhere.
    const [{ parseAlertMessage }, { renderSlackMessage }] = await Promise.all([
      import('../functions/slack-relay/message.ts'),
      import('../functions/slack-relay/blocks.ts'),
    ]);
    const message = renderSlackMessage(parseAlertMessage(body));
    const lines: string[] = [];
    const visit = (value: unknown): void => {
      if (Array.isArray(value)) for (const entry of value) visit(entry);
      else if (typeof value === 'object' && value !== null) {
        const record = value as Record<string, unknown>;
        if (typeof record.text === 'string') lines.push(record.text);
        else visit(record.text);
        visit(record.elements);
        visit(record.fields);
      }
    };
    visit((message as { blocks?: unknown }).blocks);
    return { text: lines.join('\n'), json: message };
  } catch (error) {
    return { text: `(the Slack relay would refuse this message: ${(error as Error).message})`, json: null };
  }
}
