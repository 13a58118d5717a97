import { isStopword, splitWords, stem } from './terms.js';

/**
 * Everyday ways to say the same thing in support questions and help content: a customer writes
 * "package", the help center "parcel"; an engineer asks about "RAM", the manual says "memory".
 * Each line is a set of interchangeable words or phrases. Only equivalents are listed, not
 * related words ("refund" and "return" are different things), and no word whose everyday sense
 * differs from its technical one ("drop", "order by"). A question's word brings in the others of
 * its set that the project's content uses (see queryGroups), so the list costs nothing where the
 * content does not speak that way. The short forms people type in a chat ("msg", "db", "pwd") are
 * listed with their words.
 */
const SETS = `
parcel, package, shipment
postage, shipping, delivery charge
courier, carrier
damaged, broken, smashed, cracked, shattered
missing, lost
refund, money back, reimbursement, reimburse
exchange, swap
cancel, call off
undo, revert, roll back, rollback
voucher, coupon, promo code, discount code
gift, present
cost, price, fee, charge
buy, purchase
item, product
basket, cart
invoice, receipt
vat, sales tax
abroad, overseas, international
customs, import duty
warranty, guarantee
faulty, defective, malfunctioning
collect, pick up
shop, store
sold out, out of stock
late, delayed, overdue
incorrect, wrong
declined, refused, rejected
subscription, membership
instalment, installment
sign in, log in, login, logon
sign up, register, registration
sign out, log out, logout
password, passcode, passphrase, pwd
username, user name
email, e mail
phone, mobile, handset, smartphone, cell phone
authenticator, authentication app, two factor, 2fa, verification code, one time code, otp
locked out, blocked
delete, remove, erase
modify, edit, change
forgot, forgotten
personal data, personal information
colleague, coworker, teammate
mistake, accident, accidentally, by mistake
contact, get in touch, reach
crash, power failure, power loss
corrupt, corrupted, corruption, malformed, mangled
speed, performance
slow, sluggish
memory, ram
disk, storage
backup, back up, snapshot
restore, recover, recovery
column, field
row, record
setting, parameter, option, configuration, config, knob
start, launch, boot
shut down, shutdown, halt
install, set up, setup
permission, privilege, access right
timeout, time limit
maximum, max, upper limit
concurrent, simultaneous, parallel, at the same time
temporary, temp, scratch
large, big, huge
tiny, small
encrypt, encryption
duplicate, repeated
timezone, time zone
message, msg
people, ppl
database, db
databases, dbs
directory, dir, folder
environment, env
information, info
account, acct
address, addr
application, app
quantity, qty
`;

/** A member of a set: its words, their stems, and whether it can be searched for (no stopword in it). */
interface Member {
  words: string[];
  stems: string[];
  searchable: boolean;
}

function member(text: string): Member {
  const words = splitWords(text);
  return { words, stems: words.map(stem), searchable: words.every((w) => w.length > 1 && !isStopword(w)) };
}

/** First stem of a member → the members it may start, each with the other members of its set. */
const BY_FIRST = new Map<string, Array<{ self: Member; others: Member[] }>>();
for (const line of SETS.trim().split('\n')) {
  const members = line.split(',').map(member);
  for (const self of members) {
    const key = self.stems[0]!;
    const list = BY_FIRST.get(key) ?? [];
    // A member with a stopword ("log in") is recognised in a question; only the others are searched for.
    list.push({ self, others: members.filter((m) => m !== self && m.searchable) });
    BY_FIRST.set(key, list);
  }
}

/**
 * The longest member of a set that the question's words say from `at` on ("log in" before "log"),
 * with the other members of its sets as phrases to search for; null when none starts there.
 * `words` are all the question's words, stopwords included.
 */
export function synonymsAt(words: string[], at: number): { length: number; others: string[][] } | null {
  const candidates = BY_FIRST.get(stem(words[at]!));
  if (!candidates) return null;
  let best: { length: number; others: string[][] } | null = null;
  for (const { self, others } of candidates) {
    const n = self.stems.length;
    if (at + n > words.length || (best && n < best.length)) continue;
    if (!self.stems.every((s, k) => stem(words[at + k]!) === s)) continue;
    const alts = others.map((m) => m.words);
    if (best && best.length === n) best.others.push(...alts);
    else best = { length: n, others: alts };
  }
  return best;
}
