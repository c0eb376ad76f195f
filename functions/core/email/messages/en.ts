/** English words of the email channel (see catalog.ts). */
import type { EmailWords } from './catalog.ts';

export const en: EmailWords = {
  language: 'en',
  languageName: 'English',
  mail: {
    why: (audience) => `You get this email because this address is subscribed to ${audience}.`,
    manage: 'Email preferences',
    unsubscribe: (audience) => `Unsubscribe from ${audience}`,
    readArticle: 'Read the article',
    summary: 'Why these arrive together',
    footer:
      'To change which articles you get, ask your news-alerts administrators to update the rules of audience {audienceId} (rule ids above).',
  },
  confirm: {
    subject: (audience) => `Confirm your subscription to ${audience}`,
    heading: (audience) => `Confirm your subscription to ${audience}`,
    body: (audience) =>
      `Someone asked to send the news alerts of ${audience} to this address. Nothing is sent until you confirm.`,
    button: 'Confirm subscription',
    ignore: 'If you did not ask for this, ignore this email: you will not hear from us again.',
  },
  dailyDigest: {
    subject: (audience, articles) => `[${audience}] Your daily digest: ${articles}`,
    heading: (audience, articles) => `${audience}: your daily digest, ${articles}`,
    intro: 'You chose one email a day: here is everything since the last one.',
  },
  page: {
    title: 'Email preferences',
    languageLabel: 'Language',
    addressLine: (masked) => `Settings for ${masked}`,
    listHeading: 'Your subscriptions',
    thisList: 'this list',
    state: {
      confirmed: 'Each alert as it happens',
      digest: 'One daily digest',
      paused: (until) => `Paused until ${until}`,
      pending: 'Waiting for your confirmation',
      unsubscribed: 'Unsubscribed',
    },
    suppressed:
      'Nothing is sent to this address: messages to it bounced or were reported as spam. Ask the sender to lift the block.',
    manageHeading: (audience) => `Settings for ${audience}`,
    pendingNote:
      'Open the link in the confirmation email to start getting these alerts. Once you have confirmed, you can choose here how often they come, or pause them.',
    frequencyLegend: 'How often',
    immediate: 'Each alert as it happens',
    digest: (time, zone) => `One daily digest (around ${time}, ${zone} time)`,
    save: 'Save',
    pauseLegend: 'Pause alerts',
    pauseDays: 'Days',
    pauseButton: 'Pause',
    resumeButton: 'Resume now',
    unsubscribeHeading: 'Unsubscribe',
    unsubscribeThis: (audience) => `Unsubscribe from ${audience}`,
    unsubscribeAll: 'Unsubscribe from all lists',
    notices: {
      unsubscribed: (audience) => `You are unsubscribed from ${audience}.`,
      unsubscribedAll: 'You are unsubscribed from all lists.',
      paused: (until) => `Alerts are paused until ${until}.`,
      resumed: 'Alerts resume now.',
      immediate: 'You will get each alert as it happens.',
      digest: 'You will get one daily digest.',
      confirmed: (audience) => `Your subscription to ${audience} is confirmed.`,
      nothingChanged: 'That was already so; nothing changed.',
    },
    refused: {
      unsubscribed: 'You are unsubscribed from this list; ask the sender to add you again.',
      notConfirmed: 'Confirm your subscription first (see the confirmation email).',
      badDays: (max) => `Choose a whole number of days from 1 to ${max}.`,
      badPreference: 'Choose how often: each alert as it happens, or one daily digest.',
    },
    oneClickHeading: (audience) => `Unsubscribe from ${audience}?`,
    oneClickBody: 'You will get no more alerts of this list at this address.',
    oneClickButton: 'Unsubscribe',
    oneClickDone: 'You are unsubscribed.',
    confirmHeading: (audience) => `Confirm your subscription to ${audience}`,
    confirmBody: 'Alerts start once you confirm.',
    confirmButton: 'Confirm subscription',
    invalidTitle: 'This link is not valid',
    invalidBody:
      'It may have expired, been changed, or belong to an address that is no longer subscribed. Open the link of a recent email; nothing was changed.',
    tooMany: 'Too many requests; try again in a minute.',
    manageLink: 'All settings',
  },
};
