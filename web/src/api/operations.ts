// Every GraphQL document the dashboard sends. test/unit/web-operations.test.ts validates each
// against the server's schema: the app and GraphQL clients share one contract.

const GENERATION_FIELDS = `id type status credits error created_at completed_at result_url result_urls files_expired_at progress stage
  details { __typename ... on ImageDetails { prompt model aspect_ratio quantity } ... on AiVideoDetails { all } ... on TalkingAvatarDetails { all } ... on SwapAvatarDetails { all } ... on LocalizeDetails { all } ... on VideoEditDetails { all } }`;

export const GENERATIONS = `query Generations($limit: Int, $offset: Int, $type: GenerationTypeFilter, $status: GenerationStatus) {
  generations(limit: $limit, offset: $offset, type: $type, status: $status) { totalCount limit offset items { ${GENERATION_FIELDS} } }
}`;

// Webhook deliveries are for owners only (a member's question is refused): asked only with $owner.
export const GENERATION = `query Generation($id: ID!, $owner: Boolean!) {
  generation(id: $id) {
    ${GENERATION_FIELDS}
    webhook_deliveries @include(if: $owner) { id event ok status_code attempted_at url error }
  }
}`;

export const GENERATIONS_UPDATED = `subscription GenerationsUpdated { generationsUpdated { ${GENERATION_FIELDS} } }`;

export const GENERATION_UPDATED = `subscription GenerationUpdated($id: ID!) { generationUpdated(id: $id) { ${GENERATION_FIELDS} } }`;

export const QUOTE_TEXT_TO_IMAGE = `query QuoteTextToImage($input: TextToImageInput!) {
  quoteTextToImage(input: $input) { __typename ... on QueryQuoteTextToImageSuccess { data { credits credits_remaining affordable } } ... on AppError { code message } }
}`;

export const CREATE_TEXT_TO_IMAGE = `mutation CreateTextToImage($input: TextToImageInput!, $idempotencyKey: String) {
  createTextToImage(input: $input, idempotencyKey: $idempotencyKey) { __typename ... on MutationCreateTextToImageSuccess { data { generation_id generation { id credits } } } ... on AppError { code message } }
}`;

export const CREDITS = `query Credits($days: Int, $limit: Int, $offset: Int) {
  credits { credits_used credits_limit credits_remaining }
  team { storage { outputs_bytes inputs_bytes uploads_bytes total_bytes quota_bytes } }
  topUpAllowance
  spending(days: $days) { __typename ... on QuerySpendingSuccess { data { day kind credits } } ... on AppError { code message } }
  ledger(limit: $limit, offset: $offset) { __typename ... on QueryLedgerSuccess { data { totalCount items { id kind amount generation_id subject_type note created_at credits_used_after } } } ... on AppError { code message } }
}`;

const KEY_FIELDS = 'id name hint webhook_url created_at last_used_at revoked_at';

export const API_KEYS = `query ApiKeys { apiKeys { ${KEY_FIELDS} } }`;

export const CREATE_API_KEY = `mutation CreateApiKey($name: String, $webhook_url: String) {
  createApiKey(name: $name, webhook_url: $webhook_url) { __typename ... on MutationCreateApiKeySuccess { data { key webhook_secret api_key { ${KEY_FIELDS} } } } ... on AppError { code message } }
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

export const TOP_UP_CREDITS = `mutation TopUpCredits($credits: Int!) {
  topUpCredits(credits: $credits) { __typename ... on MutationTopUpCreditsSuccess { data { credits_used credits_limit credits_remaining } } ... on AppError { code message } }
}`;

export const PRODUCTS = `query Products($limit: Int, $offset: Int) {
  products(limit: $limit, offset: $offset) { totalCount items { id name description category image_url price currency link created_at } }
}`;

export const CREATE_PRODUCT = `mutation CreateProduct($input: ProductInput!, $idempotencyKey: String) {
  createProduct(input: $input, idempotencyKey: $idempotencyKey) { __typename ... on MutationCreateProductSuccess { data { id name } } ... on AppError { code message } }
}`;

export const DELETE_PRODUCT = `mutation DeleteProduct($id: ID!) {
  deleteProduct(id: $id) { __typename ... on MutationDeleteProductSuccess { data { id } } ... on AppError { code message } }
}`;

export const BRANDS = `query Brands($limit: Int, $offset: Int) {
  brands(limit: $limit, offset: $offset) { totalCount items { id name description industry website_url brand_voice target_audience brand_color_primary brand_color_accent logo_url reference_image_url created_at } }
}`;

export const CREATE_BRAND = `mutation CreateBrand($input: BrandInput!) {
  createBrand(input: $input) { __typename ... on MutationCreateBrandSuccess { data { id name } } ... on AppError { code message } }
}`;

export const DELETE_BRAND = `mutation DeleteBrand($id: ID!) {
  deleteBrand(id: $id) { __typename ... on MutationDeleteBrandSuccess { data { id } } ... on AppError { code message } }
}`;

export const AVATARS = `query Avatars {
  avatars { id name avatar_type gender age_group thumbnail_url }
  customAvatars { id name avatar_type gender age_group thumbnail_url description created_at }
}`;

export const CREATE_CUSTOM_AVATAR = `mutation CreateCustomAvatar($input: CustomAvatarInput!, $idempotencyKey: String) {
  createCustomAvatar(input: $input, idempotencyKey: $idempotencyKey) { __typename ... on MutationCreateCustomAvatarSuccess { data { id name } } ... on AppError { code message } }
}`;

export const DELETE_CUSTOM_AVATAR = `mutation DeleteCustomAvatar($id: ID!) {
  deleteCustomAvatar(id: $id) { __typename ... on MutationDeleteCustomAvatarSuccess { data { id } } ... on AppError { code message } }
}`;

const created = (mutation: string, success: string) => `${mutation} { __typename ... on ${success} { data { generation_id } } ... on AppError { code message } }`;
const quoted = (query: string, success: string) => `${query} { __typename ... on ${success} { data { credits credits_remaining affordable } } ... on AppError { code message } }`;

export const QUOTE_AI_VIDEO = `query QuoteAiVideo($input: AiVideoInput!) { ${quoted('quoteAiVideo(input: $input)', 'QueryQuoteAiVideoSuccess')} }`;
export const CREATE_AI_VIDEO = `mutation CreateAiVideo($input: AiVideoInput!, $idempotencyKey: String) { ${created('createAiVideo(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateAiVideoSuccess')} }`;
export const QUOTE_TALKING_AVATAR = `query QuoteTalkingAvatar($input: TalkingAvatarInput!) { ${quoted('quoteTalkingAvatarVideo(input: $input)', 'QueryQuoteTalkingAvatarVideoSuccess')} }`;
export const CREATE_TALKING_AVATAR = `mutation CreateTalkingAvatar($input: TalkingAvatarInput!, $idempotencyKey: String) { ${created('createTalkingAvatarVideo(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateTalkingAvatarVideoSuccess')} }`;
export const QUOTE_SWAP_AVATAR = `query QuoteSwapAvatar($input: SwapAvatarInput!) { ${quoted('quoteSwapAvatarVideo(input: $input)', 'QueryQuoteSwapAvatarVideoSuccess')} }`;
export const CREATE_SWAP_AVATAR = `mutation CreateSwapAvatar($input: SwapAvatarInput!, $idempotencyKey: String) { ${created('createSwapAvatarVideo(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateSwapAvatarVideoSuccess')} }`;
export const QUOTE_LOCALIZE = `query QuoteLocalize($input: LocalizeInput!) { ${quoted('quoteLocalizedVideo(input: $input)', 'QueryQuoteLocalizedVideoSuccess')} }`;
export const CREATE_LOCALIZE = `mutation CreateLocalize($input: LocalizeInput!, $idempotencyKey: String) { ${created('createLocalizedVideo(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateLocalizedVideoSuccess')} }`;
export const QUOTE_VIDEO_EDIT = `query QuoteVideoEdit($input: VideoEditInput!) { ${quoted('quoteVideoEdit(input: $input)', 'QueryQuoteVideoEditSuccess')} }`;
export const CREATE_VIDEO_EDIT = `mutation CreateVideoEdit($input: VideoEditInput!, $idempotencyKey: String) { ${created('createVideoEdit(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateVideoEditSuccess')} }`;
export const QUOTE_PRODUCT_SHOTS = `query QuoteProductShots($input: ProductShotsInput!) { ${quoted('quoteProductShots(input: $input)', 'QueryQuoteProductShotsSuccess')} }`;
export const CREATE_PRODUCT_SHOTS = `mutation CreateProductShots($input: ProductShotsInput!, $idempotencyKey: String) { ${created('createProductShots(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateProductShotsSuccess')} }`;
export const QUOTE_IMAGE_EDIT = `query QuoteImageEdit($input: ImageEditInput!) { ${quoted('quoteImageEdit(input: $input)', 'QueryQuoteImageEditSuccess')} }`;
export const CREATE_IMAGE_EDIT = `mutation CreateImageEdit($input: ImageEditInput!, $idempotencyKey: String) { ${created('createImageEdit(input: $input, idempotencyKey: $idempotencyKey)', 'MutationCreateImageEditSuccess')} }`;
export const QUOTE_TEXT_TO_SPEECH = `query QuoteTextToSpeech($input: TextToSpeechInput!) { ${quoted('quoteTextToSpeech(input: $input)', 'QueryQuoteTextToSpeechSuccess')} }`;
export const CREATE_TEXT_TO_SPEECH = `mutation CreateTextToSpeech($input: TextToSpeechInput!, $idempotencyKey: String) {
  createTextToSpeech(input: $input, idempotencyKey: $idempotencyKey) { __typename ... on MutationCreateTextToSpeechSuccess { data { id audio_url duration } } ... on AppError { code message } }
}`;

export const VOICES = `query Voices($limit: Int, $offset: Int, $gender: String, $accent: String) {
  voices(limit: $limit, offset: $offset, gender: $gender, accent: $accent) { totalCount items { id name gender age_group accent style preview_audio_url } }
}`;

export const STYLES_AND_TEMPLATES = `query StylesAndTemplates { styles(limit: 100) { items { id name } } captionTemplates(limit: 100) { items { id name } } }`;

export const QUOTE_SCRAPE = `query QuoteScrape($url: String!) { ${quoted('quoteAdLibraryScrape(url: $url)', 'QueryQuoteAdLibraryScrapeSuccess')} }`;
export const SCRAPE = `mutation Scrape($url: String!, $idempotencyKey: String) {
  scrapeAdLibrary(url: $url, idempotencyKey: $idempotencyKey) { __typename ... on MutationScrapeAdLibrarySuccess { data { job_id status brand_id } } ... on AppError { code message } }
}`;
export const SCRAPE_JOB_UPDATED = `subscription ScrapeJobUpdated($id: ID!) { scrapeJobUpdated(job_id: $id) { job_id status ads_count error brand_id } }`;
export const AD_LIBRARY_BRANDS = `query AdLibraryBrands($limit: Int, $offset: Int) {
  adLibraryBrands(limit: $limit, offset: $offset) { totalCount items { id name page_url page_like_count page_categories profile_picture_url about } }
}`;
export const AD_LIBRARY_ADS = `query AdLibraryAds($brand_id: ID!, $limit: Int, $offset: Int) {
  adLibraryBrand(id: $brand_id) { id name page_url about page_like_count profile_picture_url }
  adLibraryAds(brand_id: $brand_id, limit: $limit, offset: $offset) { totalCount items { id title body_text cta_text link_url is_active start_date end_date display_format publisher_platforms thumbnail_url media { type url r2_url } } }
}`;

export const OPEN_CAMPAIGN = `mutation OpenCampaign($name: String!) {
  openCampaign(name: $name) { __typename ... on MutationOpenCampaignSuccess { data { id name status } } ... on AppError { code message } }
}`;
export const CHECK_CAMPAIGN_ROWS = `query CheckCampaignRows($rows: [CampaignRowInput!]!) {
  checkCampaignRows(rows: $rows) { row_number ok type credits row_key problems { field message } }
}`;
export const ADD_CAMPAIGN_ROWS = `mutation AddCampaignRows($id: ID!, $rows: [CampaignRowInput!]!) {
  addCampaignRows(campaign_id: $id, rows: $rows) { __typename ... on MutationAddCampaignRowsSuccess { data { stored kept changed } } ... on AppError { code message } }
}`;
export const START_CAMPAIGN = `mutation StartCampaign($id: ID!) {
  startCampaign(id: $id) { __typename ... on MutationStartCampaignSuccess { data { id status } } ... on AppError { code message } }
}`;
const CAMPAIGN_FIELDS = 'id name status finished started_at counts { total pending submitted processing completed failed credits_estimate credits_spent }';
export const CAMPAIGN_UPDATED = `subscription CampaignUpdated($id: ID!) { campaignUpdated(id: $id) { ${CAMPAIGN_FIELDS} } }`;
export const CAMPAIGN_ROWS = `query CampaignRows($id: ID!, $limit: Int, $offset: Int) {
  campaign(id: $id) { ${CAMPAIGN_FIELDS} rows(limit: $limit, offset: $offset) { totalCount items { row_number row_key type status credits generation_id voiceover_id result_url error } } }
}`;

// Which engine makes each operation on this server: the dashboard warns where the built-in demo renderer (not AI) draws.
export const ENGINES = `query Engines { engines { operation kind engines demo demo_fallback models { model engines demo } } }`;
