// Every GraphQL document the dashboard sends. test/unit/web-operations.test.ts validates each
// against the server's schema: the app and GraphQL clients share one contract.

const GENERATION_FIELDS = `id type status credits error created_at completed_at result_url result_urls
  details { __typename ... on ImageDetails { prompt model aspect_ratio quantity } ... on AiVideoDetails { all } ... on TalkingAvatarDetails { all } ... on SwapAvatarDetails { all } ... on LocalizeDetails { all } ... on VideoEditDetails { all } }`;

export const GENERATIONS = `query Generations($limit: Int, $offset: Int, $type: GenerationTypeFilter, $status: GenerationStatus) {
  generations(limit: $limit, offset: $offset, type: $type, status: $status) { totalCount limit offset items { ${GENERATION_FIELDS} } }
}`;

export const GENERATION = `query Generation($id: ID!) {
  generation(id: $id) {
    ${GENERATION_FIELDS}
    webhook_deliveries { id event ok status_code attempted_at url error }
  }
}`;

export const GENERATIONS_UPDATED = `subscription GenerationsUpdated { generationsUpdated { ${GENERATION_FIELDS} } }`;

export const QUOTE_TEXT_TO_IMAGE = `query QuoteTextToImage($input: TextToImageInput!) {
  quoteTextToImage(input: $input) { __typename ... on QueryQuoteTextToImageSuccess { data { credits credits_remaining affordable } } ... on AppError { code message } }
}`;

export const CREATE_TEXT_TO_IMAGE = `mutation CreateTextToImage($input: TextToImageInput!, $idempotencyKey: String) {
  createTextToImage(input: $input, idempotencyKey: $idempotencyKey) { __typename ... on MutationCreateTextToImageSuccess { data { generation_id generation { id credits } } } ... on AppError { code message } }
}`;

export const CREDITS = `query Credits($days: Int, $limit: Int, $offset: Int) {
  credits { credits_used credits_limit credits_remaining }
  spending(days: $days) { __typename ... on QuerySpendingSuccess { data { day kind credits } } ... on AppError { code message } }
  ledger(limit: $limit, offset: $offset) { __typename ... on QueryLedgerSuccess { data { totalCount items { id kind amount generation_id subject_type note created_at credits_used_after } } } ... on AppError { code message } }
}`;

const KEY_FIELDS = 'id name hint webhook_url created_at last_used_at revoked_at';

export const API_KEYS = `query ApiKeys { apiKeys { ${KEY_FIELDS} } }`;

export const CREATE_API_KEY = `mutation CreateApiKey($name: String, $webhook_url: String) {
  createApiKey(name: $name, webhook_url: $webhook_url) { __typename ... on MutationCreateApiKeySuccess { data { key webhook_secret api_key { ${KEY_FIELDS} } } } ... on AppError { code message } }
}`;

export const RENAME_API_KEY = `mutation RenameApiKey($id: ID!, $name: String!) {
  renameApiKey(id: $id, name: $name) { __typename ... on MutationRenameApiKeySuccess { data { ${KEY_FIELDS} } } ... on AppError { code message } }
}`;

export const REVOKE_API_KEY = `mutation RevokeApiKey($id: ID!) {
  revokeApiKey(id: $id) { __typename ... on MutationRevokeApiKeySuccess { data { ${KEY_FIELDS} } } ... on AppError { code message } }
}`;

export const SET_API_KEY_WEBHOOK = `mutation SetApiKeyWebhook($id: ID!, $url: String) {
  setApiKeyWebhook(id: $id, url: $url) { __typename ... on MutationSetApiKeyWebhookSuccess { data { ${KEY_FIELDS} } } ... on AppError { code message } }
}`;

export const ROTATE_WEBHOOK_SECRET = `mutation RotateWebhookSecret($id: ID!) {
  rotateApiKeyWebhookSecret(id: $id) { __typename ... on MutationRotateApiKeyWebhookSecretSuccess { data { webhook_secret } } ... on AppError { code message } }
}`;

export const SEND_TEST_WEBHOOK = `mutation SendTestWebhook($id: ID!) {
  sendApiKeyTestWebhook(id: $id) { __typename ... on MutationSendApiKeyTestWebhookSuccess { data { id event ok status_code error } } ... on AppError { code message } }
}`;

export const KEY_DELIVERIES = `query KeyDeliveries($id: ID!, $limit: Int) {
  apiKeyDeliveries(key_id: $id, limit: $limit) { totalCount items { id event ok status_code attempted_at latency_ms error generation_id } }
}`;

export const MEMBERS = `query Members { members { id email role active created_at } }`;

export const INVITE_MEMBER = `mutation InviteMember($email: String!, $role: Role!) {
  inviteMember(email: $email, role: $role) { __typename ... on MutationInviteMemberSuccess { data { url expires_at member { id email role active created_at } } } ... on AppError { code message } }
}`;

export const SET_MEMBER_ROLE = `mutation SetMemberRole($id: ID!, $role: Role!) {
  setMemberRole(id: $id, role: $role) { __typename ... on MutationSetMemberRoleSuccess { data { id role } } ... on AppError { code message } }
}`;

export const REMOVE_MEMBER = `mutation RemoveMember($id: ID!) {
  removeMember(id: $id) { __typename ... on MutationRemoveMemberSuccess { data { id } } ... on AppError { code message } }
}`;
