// The create both APIs are measured with: REST's body, and GraphQL's mutation with the same
// input asking back what REST answers.
export const CREATE_PATH = '/api/v1/images/text-to-image';
export const CREATE_INPUT = { model: 'fast', prompt: 'bench', aspect_ratio: '1:1' };
export const CREATE_BODY = JSON.stringify(CREATE_INPUT);
export const GRAPHQL_CREATE_BODY = JSON.stringify({
  query:
    'mutation Create($input: TextToImageInput!) { createTextToImage(input: $input) { __typename ... on MutationCreateTextToImageSuccess { data { generation_id type status } } ... on AppError { code message } } }',
  variables: { input: CREATE_INPUT },
});
