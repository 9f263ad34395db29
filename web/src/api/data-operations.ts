// The dashboard's documents for the team's data (issue 28): deleting generations, retention,
// export, team deletion and the audit log. Validated against the schema like operations.ts.

export const DELETE_GENERATION = `mutation DeleteGeneration($id: ID!) {
  deleteGeneration(id: $id) { __typename ... on MutationDeleteGenerationSuccess { data { id } } ... on AppError { code message } }
}`;

export const DELETE_GENERATIONS = `mutation DeleteGenerations($ids: [ID!], $filter: GenerationDeleteFilter) {
  deleteGenerations(ids: $ids, filter: $filter) { __typename ... on MutationDeleteGenerationsSuccess { data { deleted skipped not_found has_more } } ... on AppError { code message } }
}`;

/** How many generations match a filter: the gallery's bulk delete says so before it asks. */
export const GENERATIONS_AT = `query GenerationsAt($offset: Int, $type: GenerationTypeFilter, $status: GenerationStatus) {
  generations(limit: 1, offset: $offset, type: $type, status: $status) { totalCount items { id created_at } }
}`;

const RETENTION_FIELDS = 'days team_days server_days';

export const TEAM_RETENTION = `query TeamRetention { team { id name retention { ${RETENTION_FIELDS} } } }`;

export const SET_TEAM_RETENTION = `mutation SetTeamRetention($days: Int) {
  setTeamRetention(days: $days) { __typename ... on MutationSetTeamRetentionSuccess { data { ${RETENTION_FIELDS} } } ... on AppError { code message } }
}`;

const EXPORT_FIELDS = 'id status created_at completed_at size error downloaded_at available_until';

export const TEAM_EXPORTS = `query TeamExports { teamExports { ${EXPORT_FIELDS} } }`;

export const TEAM_EXPORT = `query TeamExport($id: ID!) { teamExport(id: $id) { ${EXPORT_FIELDS} } }`;

export const START_TEAM_EXPORT = `mutation StartTeamExport {
  startTeamExport { __typename ... on MutationStartTeamExportSuccess { data { ${EXPORT_FIELDS} } } ... on AppError { code message } }
}`;

export const DOWNLOAD_TEAM_EXPORT = `mutation DownloadTeamExport($id: ID!) {
  downloadTeamExport(id: $id) { __typename ... on MutationDownloadTeamExportSuccess { data { url expires_at } } ... on AppError { code message } }
}`;

export const DELETE_TEAM = `mutation DeleteTeam($confirm_name: String!) {
  deleteTeam(confirm_name: $confirm_name) { __typename ... on MutationDeleteTeamSuccess { data { team_id deleted_at } } ... on AppError { code message } }
}`;

export const AUDIT_LOG = `query AuditLog($action: String, $actor_id: ID, $actor_kind: String, $since: String, $until: String, $limit: Int, $offset: Int) {
  auditLog(action: $action, actor_id: $actor_id, actor_kind: $actor_kind, since: $since, until: $until, limit: $limit, offset: $offset) {
    totalCount limit offset
    items { id action created_at detail ip user_agent actor { kind email key_hint key_id key_name name user_id } }
  }
}`;
