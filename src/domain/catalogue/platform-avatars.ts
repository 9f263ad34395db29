export interface PlatformAvatarSeed {
  id: string;
  name: string;
  gender: 'male' | 'female';
  age_group: 'young_adult' | 'adult' | 'senior';
  /** How the local renderer paints the portrait. */
  look: { skin: string; hair: string; outfit: string; backdrop: string; longHair: boolean };
}

// Fixed ids: clients may store them, so a re-seed must never change them.
export const PLATFORM_AVATARS: readonly PlatformAvatarSeed[] = [
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a01', name: 'Amara', gender: 'female', age_group: 'young_adult', look: { skin: '#8d5524', hair: '#1b1b1b', outfit: '#e07a5f', backdrop: '#f4f1de', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a02', name: 'Lucas', gender: 'male', age_group: 'young_adult', look: { skin: '#f1c27d', hair: '#6f4e37', outfit: '#3d405b', backdrop: '#e9f5db', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a03', name: 'Mei', gender: 'female', age_group: 'adult', look: { skin: '#ffdbac', hair: '#0d0d0d', outfit: '#81b29a', backdrop: '#fdf0d5', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a04', name: 'Daniel', gender: 'male', age_group: 'adult', look: { skin: '#c68642', hair: '#2b1d0e', outfit: '#264653', backdrop: '#e0fbfc', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a05', name: 'Ingrid', gender: 'female', age_group: 'senior', look: { skin: '#f5d0b5', hair: '#d9d9d9', outfit: '#9b2226', backdrop: '#edf6f9', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a06', name: 'Walter', gender: 'male', age_group: 'senior', look: { skin: '#e0ac69', hair: '#bfbfbf', outfit: '#5e548e', backdrop: '#f8edeb', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a07', name: 'Sofia', gender: 'female', age_group: 'young_adult', look: { skin: '#e8b98f', hair: '#8b4513', outfit: '#f2cc8f', backdrop: '#dde5b6', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a08', name: 'Kwame', gender: 'male', age_group: 'young_adult', look: { skin: '#5c3317', hair: '#0a0a0a', outfit: '#2a9d8f', backdrop: '#fefae0', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a09', name: 'Priya', gender: 'female', age_group: 'adult', look: { skin: '#b07a4f', hair: '#140c06', outfit: '#e76f51', backdrop: '#f1faee', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a10', name: 'Mateo', gender: 'male', age_group: 'adult', look: { skin: '#d1a17a', hair: '#3b2a1a', outfit: '#1d3557', backdrop: '#ffe8d6', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a11', name: 'Hannah', gender: 'female', age_group: 'adult', look: { skin: '#fce2c4', hair: '#e6be8a', outfit: '#6a4c93', backdrop: '#e3f2fd', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a12', name: 'Kenji', gender: 'male', age_group: 'young_adult', look: { skin: '#f3d3b0', hair: '#121212', outfit: '#f4a261', backdrop: '#eae2b7', longHair: false } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a13', name: 'Grace', gender: 'female', age_group: 'senior', look: { skin: '#7b4a2a', hair: '#e5e5e5', outfit: '#457b9d', backdrop: '#fff1e6', longHair: true } },
  { id: '0b6f8a52-3c1e-4d0a-9a61-1f0c2e5b7a14', name: 'Omar', gender: 'male', age_group: 'adult', look: { skin: '#a0522d', hair: '#1a1110', outfit: '#588157', backdrop: '#f0efeb', longHair: false } },
];
