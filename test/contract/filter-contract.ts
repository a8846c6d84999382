import { describe, expect, it } from 'vitest';
import { MATCH_KEY_CHARS } from '../../src/domain/match-key.js';
import type { PageQuery } from '../../src/ports/mail-store.js';
import { FILTER_SCAN_ROWS } from '../../src/storage/sql/filtered-scan.js';
import { addInbox, deliverOne, makeMail, openPolicy, storedIds, type StoreGetter } from './mail-store-fixtures.js';
import { listMessageIds, listMessagePage } from '../helpers/store-reads.js';

const PAGE = { maxFieldBytes: 64 };

/**
 * The filters of a listing on every backend (docs/api.md, check: "Filters"): one Unicode fold
 * (domain/match-key.ts) for the stored keys and the filters, keys bounded to MATCH_KEY_CHARS,
 * inboxes larger than one statement of the SQL scan, and a wait's cursor (`afterId`).
 */
export function describeFilterContract(store: StoreGetter): void {
  describe('filters', () => {
    const ids = async (inboxId: string, query: Partial<PageQuery>) =>
      (await listMessagePage(store(), inboxId, { limit: 100, ...PAGE, ...query })).messages.map((m) => m.subject);

    it('folds case by Unicode on every backend: accents, ß as ss, every sigma, the Turkish i, compatibility forms', async () => {
      const inbox = await addInbox(store());
      const send = async (subject: string, from = 'Alice <alice@example.org>', recipient = `${inbox.username}@tempinbox.test`) =>
        storedIds(await store().insertMessage({ ...makeMail({ subject, from }), recipients: new Map([[inbox.id, recipient]]) }, [inbox.id], openPolicy()));
      await send('ÉLAN vital');
      await send('e\u0301lan decomposed');
      await send('Straße 5');
      await send('ΟΔΟΣ');
      await send('IŞIK');
      await send('İstanbul');
      await send('ﬁle and ＡＢＣ');
      await send('from Élise', 'Élise <ÉLISE@example.org>', `${inbox.username}+STRASSE@tempinbox.test`);
      const subjects = (query: Partial<PageQuery>) => ids(inbox.id, query);

      expect(await subjects({ filter: { subject: 'élan' } })).toEqual(['e\u0301lan decomposed', 'ÉLAN vital']);
      expect(await subjects({ filter: { subject: 'ÉLAN' } })).toEqual(['e\u0301lan decomposed', 'ÉLAN vital']);
      expect(await subjects({ filter: { subject: 'STRASSE' } })).toEqual(['Straße 5']);
      expect(await subjects({ filter: { subject: 'straße' } })).toEqual(['Straße 5']);
      expect(await subjects({ filter: { subject: 'ẞ' } })).toEqual(['Straße 5']);
      expect(await subjects({ filter: { subject: 'οδος' } })).toEqual(['ΟΔΟΣ']);
      expect(await subjects({ filter: { subject: 'οδοσ' } })).toEqual(['ΟΔΟΣ']);
      // A substring ending in the middle of a word: Σ there is no final sigma.
      expect(await subjects({ filter: { subject: 'ΟΔΟς' } })).toEqual(['ΟΔΟΣ']);
      expect(await subjects({ filter: { subject: 'ışık' } })).toEqual(['IŞIK']);
      expect(await subjects({ filter: { subject: 'istanbul' } })).toEqual(['İstanbul']);
      expect(await subjects({ filter: { subject: 'FILE AND ABC' } })).toEqual(['ﬁle and ＡＢＣ']);
      expect(await subjects({ filter: { from: 'élise@' } })).toEqual(['from Élise']);
      expect(await subjects({ filter: { to: '+straße@' } })).toEqual(['from Élise']);
      expect(await subjects({ filter: { subject: 'elan' } })).toEqual([]);
      // listMessageIds applies the same fold.
      expect((await listMessageIds(store(), inbox.id, { limit: 10, filter: { subject: 'STRASSE' } })).ids).toHaveLength(1);
    });

    it('matches within the first MATCH_KEY_CHARS characters of a field, and a from filter within one of From and envelope sender', async () => {
      const inbox = await addInbox(store());
      const pad = 'x'.repeat(MATCH_KEY_CHARS - 'inside'.length);
      await deliverOne(store(), inbox.id, { subject: `${pad}inside`, from: `${pad}inside@example.org`, envelopeFrom: 'env@bounce.example' });
      await deliverOne(store(), inbox.id, { subject: `${pad}xoutside`, from: 'short@example.org', envelopeFrom: 'env@bounce.example' });
      expect(await ids(inbox.id, { filter: { subject: 'inside' } })).toEqual([`${pad}inside`]);
      expect(await ids(inbox.id, { filter: { subject: 'outside' } })).toEqual([]);
      expect(await ids(inbox.id, { filter: { from: 'xinside' } })).toEqual([`${pad}inside`]);
      expect(await ids(inbox.id, { filter: { from: 'env@bounce' } })).toHaveLength(2);
      // The two keys are apart: no match across the From header's end and the envelope sender.
      expect(await ids(inbox.id, { filter: { from: 'example.orgenv' } })).toEqual([]);
      expect(await ids(inbox.id, { filter: { from: 'example.org env' } })).toEqual([]);
    });

    it('finds matches across an inbox larger than one scan statement, counting matches for the limit, within since and before', async () => {
      const inbox = await addInbox(store());
      const total = FILTER_SCAN_ROWS * 2 + 10;
      const subjectOf = (i: number) => (i % 100 === 3 ? `match ${i}` : `noise ${i}`);
      // A few at a time (quicker than one by one on a database that fsyncs each commit).
      for (let start = 0; start < total; start += 25) {
        await Promise.all(Array.from({ length: Math.min(25, total - start) }, (_, k) => deliverOne(store(), inbox.id, { subject: subjectOf(start + k) })));
      }
      // The inbox as stored, oldest first: the order every page follows.
      const all = (await listMessagePage(store(), inbox.id, { limit: total, maxFieldBytes: 0 })).messages.reverse();
      expect(all).toHaveLength(total);
      const subjects = all.map((message) => message.subject);
      const stored = all.map((message) => message.id);
      const matches = subjects.filter((subject) => subject.startsWith('match')).reverse();
      expect(await ids(inbox.id, { filter: { subject: 'MATCH' } })).toEqual(matches);
      expect(await ids(inbox.id, { filter: { subject: 'match' }, limit: 2 })).toEqual(matches.slice(0, 2));
      expect(await ids(inbox.id, { filter: { subject: 'match' }, oldestFirst: true, limit: 3 })).toEqual([...matches].reverse().slice(0, 3));
      // `before` the newest match and `since` the oldest: the ones between.
      const newestMatch = stored[subjects.indexOf(matches[0] ?? '')];
      const oldestMatch = stored[subjects.indexOf(matches.at(-1) ?? '')];
      expect(await ids(inbox.id, { filter: { subject: 'match' }, beforeId: newestMatch, sinceId: oldestMatch })).toEqual(matches.slice(1, -1));
      const page = await listMessageIds(store(), inbox.id, { limit: 100, filter: { subject: 'match' }, beforeId: newestMatch });
      expect(page.ids).toHaveLength(matches.length - 1);
      expect(page.beforeFound).toBe(true);
      expect(await ids(inbox.id, { filter: { subject: 'absent' } })).toEqual([]);
    });

    it('reads only after a wait cursor (afterId), which must be a message of the inbox', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const m1 = await deliverOne(store(), inbox.id, { subject: 'code 1' });
      const m2 = await deliverOne(store(), inbox.id, { subject: 'news 2' });
      const m3 = await deliverOne(store(), inbox.id, { subject: 'code 3' });
      const foreign = await deliverOne(store(), other.id, { subject: 'code x' });
      const page = (query: Partial<PageQuery>) => listMessagePage(store(), inbox.id, { limit: 10, ...PAGE, ...query });
      expect((await page({ afterId: m1, filter: { subject: 'code' } })).messages.map((m) => m.id)).toEqual([m3]);
      expect(await page({ afterId: m1 })).toMatchObject({ beforeFound: true, afterFound: true });
      expect((await page({ afterId: m2, sinceId: m1 })).messages.map((m) => m.id)).toEqual([m3]);
      // The later of since and the cursor bounds the page.
      expect((await page({ afterId: m1, sinceId: m2 })).messages.map((m) => m.id)).toEqual([m3]);
      expect(await listMessageIds(store(), inbox.id, { limit: 10, afterId: m2 })).toEqual({ ids: [m3], beforeFound: true, afterFound: true });
      // A cursor that is another inbox's message, or was deleted, reads nothing and says so.
      expect(await page({ afterId: foreign })).toEqual({ messages: [], beforeFound: true, afterFound: false });
      await store().deleteMessage(m2);
      expect(await listMessageIds(store(), inbox.id, { limit: 10, afterId: m2, filter: { subject: 'code' } })).toEqual({ ids: [], beforeFound: true, afterFound: false });
      // Without a cursor there is no afterFound.
      expect(await page({ filter: { subject: 'code' } })).not.toHaveProperty('afterFound');
    });
  });
}
