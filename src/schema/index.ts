export * from './account.js';
export * from './codes.js';
export * from './issues.js';
export * from './note.js';
export {
  amount,
  cents,
  date,
  datetime,
  documentPath,
  email,
  isCalendarDate,
  isIsoDatetime,
  metadata,
  phone,
} from './primitives.js';
export * from './requests.js';
export * from './responses.js';
export * from './statement.js';
export * from './transaction.js';
export * from './validate.js';
