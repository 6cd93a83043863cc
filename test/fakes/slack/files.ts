/**
 * Slack's file side: private files served at url_private only with the bot
 * token, and the current upload flow (files.getUploadURLExternal → POST the
 * bytes to upload_url → files.completeUploadExternal) that @slack/web-api's
 * filesUploadV2 drives.
 */
import { fileTypeOf, type SlackFile } from "./events.ts";

export interface PendingUpload {
  file_id: string;
  filename: string;
  /** The length the client declared in getUploadURLExternal. */
  length: number;
  alt_txt?: string;
  /** Set once the bytes were POSTed to upload_url. */
  bytes?: Uint8Array;
  /** The upload part's filename and content type, as sent. */
  part?: { field: string; filename: string; type: string };
  completed: boolean;
}

export class SlackFileStore {
  private readonly files = new Map<string, { file: SlackFile; bytes: Uint8Array }>();
  readonly uploads = new Map<string, PendingUpload>();
  private counter = 0;

  constructor(
    private readonly baseUrl: () => string,
    private readonly teamId: string,
  ) {}

  newFileId(): string {
    return `F0${(++this.counter).toString(36).toUpperCase().padStart(9, "0")}`;
  }

  /** Create a hosted file; its url_private points at the fake and needs the bot token. */
  add(opts: { name: string; bytes: Uint8Array; mimetype?: string; size?: number; title?: string; user?: string; id?: string }): SlackFile {
    const id = opts.id ?? this.newFileId();
    const now = Math.floor(Date.now() / 1000);
    const name = opts.name;
    const enc = encodeURIComponent(name);
    const user = opts.user ?? "U0ALICE0001";
    const file: SlackFile = {
      id,
      created: now,
      timestamp: now,
      name,
      title: opts.title ?? name,
      mimetype: opts.mimetype ?? "application/octet-stream",
      ...fileTypeOf(name),
      user,
      user_team: this.teamId,
      editable: false,
      size: opts.size ?? opts.bytes.byteLength,
      mode: "hosted",
      is_external: false,
      external_type: "",
      is_public: false,
      public_url_shared: false,
      display_as_bot: false,
      username: "",
      url_private: `${this.baseUrl()}/files-pri/${this.teamId}-${id}/${enc}`,
      url_private_download: `${this.baseUrl()}/files-pri/${this.teamId}-${id}/download/${enc}`,
      permalink: `https://fermix-test.slack.com/files/${user}/${id}/${enc}`,
      permalink_public: `https://slack-files.com/${this.teamId}-${id}-0000000000`,
      is_starred: false,
      has_rich_preview: false,
      file_access: "visible",
    };
    if (file.mimetype.startsWith("image/")) {
      Object.assign(file, { original_w: 1024, original_h: 768, thumb_360: `${file.url_private}?thumb=360` });
    }
    this.files.set(id, { file, bytes: opts.bytes });
    return file;
  }

  get(id: string): { file: SlackFile; bytes: Uint8Array } | undefined {
    return this.files.get(id);
  }

  /** The file behind a `/files-pri/<team>-<id>/[download/]<name>` path. */
  byPrivatePath(path: string): { file: SlackFile; bytes: Uint8Array } | undefined {
    const m = /^\/files-pri\/[A-Z0-9]+-(F[A-Z0-9]+)\//.exec(path);
    return m ? this.files.get(m[1]!) : undefined;
  }
}
