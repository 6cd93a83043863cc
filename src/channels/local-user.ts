/**
 * The machine's own user, as the local surfaces (the command line, realtime
 * voice) name their sender: the account the OS says runs this process. The
 * sockets' file mode makes that account the owner.
 */
import { userInfo } from "node:os";

export function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "local";
  }
}
