// Every use of jspurefix goes through this module, so that the Reflect metadata polyfill it needs is
// loaded before it (a module's imports are evaluated in the order they are written).
import './reflect-polyfill.js';

export {
  AsciiSession,
  AsciiSessionMsgFactory,
  DefinitionFactory,
  FixDuplex,
  FixMsgStoreRecord,
  JsFixConfig,
  JsFixLoggerFactory,
  MsgTag,
  MsgTransport,
  MsgType,
  SessionContainer,
  SessionId,
  SessionState,
} from 'jspurefix';
export type {
  FixDefinitions,
  IFixMsgStoreRecord,
  IFixSessionStore,
  IJsFixConfig,
  IJsFixLogger,
  ILooseObject,
  ISessionDescription,
  JsFixLogFields,
  MsgView,
  SendCallback,
} from 'jspurefix';
