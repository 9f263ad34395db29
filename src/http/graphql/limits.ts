// Limits against abusive queries; an over-limit query is a GraphQL error before execution.
export const GRAPHQL_LIMITS = { maxDepth: 10, maxAliases: 15, maxTokens: 2000, maxDirectives: 20, maxCost: 5000 };
