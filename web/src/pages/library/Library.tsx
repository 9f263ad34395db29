import { teamAvatars, type Avatar } from '../../api/avatars.ts';
import { gql } from '../../api/client.ts';
import { BRANDS, CREATE_BRAND, CREATE_CUSTOM_AVATAR, CREATE_PRODUCT, DELETE_BRAND, DELETE_CUSTOM_AVATAR, DELETE_PRODUCT, PRODUCTS } from '../../api/operations.ts';
import { brandCreate, customAvatarCreate, productCreate } from '../../../../src/domain/inputs.ts';
import { ResourcePage, type ResourceConfig } from './ResourcePage.tsx';

interface Product {
  id: string;
  name: string;
  description: string;
  category: string;
  image_url: string;
  price: number | null;
  currency: string;
}

interface Brand {
  id: string;
  name: string;
  description: string;
  industry: string;
  website_url: string | null;
  brand_color_primary: string | null;
  brand_color_accent: string | null;
  logo_url: string | null;
}

const PRODUCTS_CONFIG: ResourceConfig<Product> = {
  title: 'Products',
  lead: 'What your ads sell: product shots and images can show them, from the picture stored here.',
  noun: 'product',
  emptyHint: <p>Add one with a picture (a file or its URL): adforge keeps its own copy.</p>,
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'category', label: 'Category', required: true, placeholder: 'e.g. beverages' },
    { name: 'image_url', label: 'Image URL', type: 'url', required: true, upload: 'image' },
    { name: 'price', label: 'Price', type: 'number' },
    { name: 'currency', label: 'Currency', placeholder: 'USD' },
    { name: 'link', label: 'Product page', type: 'url' },
    { name: 'description', label: 'Description', type: 'textarea', required: true },
  ],
  schema: productCreate,
  load: async () => (await gql<{ products: { items: Product[] } }>(PRODUCTS, { limit: 100 })).products.items,
  create: { document: CREATE_PRODUCT, field: 'createProduct', idempotent: true },
  remove: { document: DELETE_PRODUCT, field: 'deleteProduct' },
  render: (p) => (
    <>
      <div className="thumb">
        <img src={p.image_url} alt={p.name} loading="lazy" />
      </div>
      <strong>{p.name}</strong>
      <span className="hint">
        {p.category}
        {p.price !== null && ` · ${p.price} ${p.currency}`}
      </span>
      <p className="caption">{p.description}</p>
    </>
  ),
};

const BRANDS_CONFIG: ResourceConfig<Brand> = {
  title: 'Brands',
  lead: 'A brand gives images its identity (colours, voice, logo) when a create names it.',
  noun: 'brand',
  emptyHint: <p>Add your brand with its colours and logo.</p>,
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'industry', label: 'Industry' },
    { name: 'website_url', label: 'Website', type: 'url' },
    { name: 'logo_url', label: 'Logo URL', type: 'url', upload: 'image' },
    { name: 'reference_image_url', label: 'Reference image URL', type: 'url', upload: 'image' },
    { name: 'brand_color_primary', label: 'Primary colour', placeholder: '#1A2B3C' },
    { name: 'brand_color_accent', label: 'Accent colour', placeholder: '#FFAA00' },
    { name: 'brand_voice', label: 'Voice', placeholder: 'warm, direct' },
    { name: 'target_audience', label: 'Audience' },
    { name: 'description', label: 'Description', type: 'textarea' },
  ],
  schema: brandCreate,
  load: async () => (await gql<{ brands: { items: Brand[] } }>(BRANDS, { limit: 100 })).brands.items,
  create: { document: CREATE_BRAND, field: 'createBrand', idempotent: false },
  remove: { document: DELETE_BRAND, field: 'deleteBrand' },
  render: (b) => (
    <>
      <div className="thumb">{b.logo_url ? <img src={b.logo_url} alt={`${b.name} logo`} loading="lazy" /> : <span className="placeholder">no logo</span>}</div>
      <strong>{b.name}</strong>
      <span className="hint">{[b.industry, b.brand_color_primary, b.brand_color_accent].filter(Boolean).join(' · ')}</span>
      <p className="caption">{b.description}</p>
    </>
  ),
};

const AVATARS_CONFIG: ResourceConfig<Avatar> = {
  title: 'Avatars',
  lead: 'The faces of talking-avatar videos: the catalogue, and your own from a portrait (a file or its URL).',
  noun: 'avatar',
  emptyHint: null,
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'image_url', label: 'Portrait URL', type: 'url', required: true, upload: 'image' },
    { name: 'gender', label: 'Gender', type: 'select', options: ['female', 'male'] },
    { name: 'age_group', label: 'Age', type: 'select', options: ['kid', 'young_adult', 'adult', 'senior'] },
    { name: 'description', label: 'Description', type: 'textarea' },
  ],
  schema: customAvatarCreate,
  load: teamAvatars,
  create: { document: CREATE_CUSTOM_AVATAR, field: 'createCustomAvatar', idempotent: true },
  remove: { document: DELETE_CUSTOM_AVATAR, field: 'deleteCustomAvatar' },
  deletable: (a) => a.avatar_type === 'custom',
  render: (a) => (
    <>
      <div className="thumb">
        <img src={a.thumbnail_url} alt={a.name} loading="lazy" />
      </div>
      <strong>{a.name}</strong>
      <span className="hint">{[a.avatar_type === 'custom' ? 'yours' : 'catalogue', a.gender, a.age_group?.replace('_', ' ')].filter(Boolean).join(' · ')}</span>
    </>
  ),
};

export const Products = () => <ResourcePage config={PRODUCTS_CONFIG} />;
export const Brands = () => <ResourcePage config={BRANDS_CONFIG} />;
export const Avatars = () => <ResourcePage config={AVATARS_CONFIG} />;
