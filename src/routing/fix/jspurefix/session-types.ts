import { MsgType, SessionState } from './api.js';

/** Session-level messages: jspurefix handles them; everything else is the application's. */
export const SESSION_TYPES = new Set<string>([
  MsgType.Logon,
  MsgType.Logout,
  MsgType.Heartbeat,
  MsgType.TestRequest,
  MsgType.ResendRequest,
  MsgType.SequenceReset,
  MsgType.Reject,
]);

/** States in which jspurefix refuses an application message although the session is up. */
export const BUSY_STATES = new Set<SessionState>([
  SessionState.AwaitingProcessingResponseToTestRequest,
  SessionState.AwaitingProcessingResponseToResendRequest,
  SessionState.HandleResendRequest,
]);
