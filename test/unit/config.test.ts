import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';

const s3Env = { STORAGE: 's3', S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' };

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`expected loadConfig(${JSON.stringify(env)}) to throw`);
}

describe('loadConfig defaults', () => {
  const config = loadConfig({});

  it('resolves DATA_DIR to an absolute path ending in .data (relative to the working directory)', () => {
    expect(path.isAbsolute(config.dataDir)).toBe(true);
    expect(path.basename(config.dataDir)).toBe('.data');
    expect(config.dataDir).toBe(path.resolve(process.cwd(), '.data'));
  });

  it('listens on 0.0.0.0:8443 and advertises https://localhost:8443', () => {
    expect(config.port).toBe(8443);
    expect(config.host).toBe('0.0.0.0');
    expect(config.publicBaseUrl).toBe('https://localhost:8443');
  });

  it('stores files locally, without S3 settings', () => {
    expect(config.storage).toBe('local');
    expect(config.s3).toBeUndefined();
  });

  it('does not trust proxies and does not allow private-network URLs', () => {
    expect(config.trustProxy).toBe(false);
    expect(config.allowPrivateNetworkUrls).toBe(false);
  });

  it('leaves database, TLS and signing settings unset, logs at info with 4 workers', () => {
    expect(config.databaseUrl).toBeUndefined();
    expect(config.pgPort).toBeUndefined();
    expect(config.tlsCertFile).toBeUndefined();
    expect(config.tlsKeyFile).toBeUndefined();
    expect(config.filesSigningSecret).toBeUndefined();
    expect(config.logLevel).toBe('info');
    expect(config.workerConcurrency).toBe(4);
  });

  it('reads only the environment it is given', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root', UNRELATED: 'x' })).toEqual(config);
  });
});

describe('loadConfig values', () => {
  it('keeps an absolute DATA_DIR and resolves a relative one', () => {
    expect(loadConfig({ DATA_DIR: '/var/lib/adforge' }).dataDir).toBe('/var/lib/adforge');
    expect(loadConfig({ DATA_DIR: 'state/x' }).dataDir).toBe(path.resolve('state/x'));
  });

  it('derives the default public base URL from PORT', () => {
    const config = loadConfig({ PORT: '9443' });
    expect(config.port).toBe(9443);
    expect(config.publicBaseUrl).toBe('https://localhost:9443');
  });

  it('takes PUBLIC_BASE_URL as given, without trailing slashes', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://ads.example.com' }).publicBaseUrl).toBe('https://ads.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://ads.example.com/' }).publicBaseUrl).toBe('https://ads.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://ads.example.com/base///' }).publicBaseUrl).toBe('https://ads.example.com/base');
  });

  it('refuses a PUBLIC_BASE_URL that is not a URL, naming it', () => {
    expect(configError({ PUBLIC_BASE_URL: 'ads.example.com' })).toMatch(/^\s*PUBLIC_BASE_URL:/m);
  });

  it.each(['ALLOW_PRIVATE_NETWORK_URLS', 'S3_FORCE_PATH_STYLE'] as const)('parses the %s flag: "true" and "1" are true, "false" and "0" false', (name) => {
    const read = (value: string): boolean => {
      const config = loadConfig({ ...s3Env, [name]: value });
      if (name === 'ALLOW_PRIVATE_NETWORK_URLS') return config.allowPrivateNetworkUrls;
      return config.s3!.forcePathStyle;
    };
    expect(read('true')).toBe(true);
    expect(read('1')).toBe(true);
    expect(read('false')).toBe(false);
    expect(read('0')).toBe(false);
  });

  it.each(['yes', 'no', 'on', 'TRUE', '2', ' true'])('refuses the flag value %j, naming the variable', (value) => {
    expect(configError({ ALLOW_PRIVATE_NETWORK_URLS: value })).toMatch(/^\s*ALLOW_PRIVATE_NETWORK_URLS:/m);
  });

  // Issue 26, Low: trusting every forwarding hop let a client choose its own address.
  it.each([
    ['', false],
    ['false', false],
    ['0', false],
    ['true', 1],
    ['1', 1],
    ['2', 2],
    ['10.0.0.5', ['10.0.0.5']],
    ['10.0.0.0/8, 192.168.1.1,fd00::/8', ['10.0.0.0/8', '192.168.1.1', 'fd00::/8']],
  ] as const)('TRUST_PROXY=%j trusts %j (a number of hops, true meaning 1, or the proxies\' addresses)', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['yes', 'TRUE', '11', '-1', '1.5', '10.0.0.0/33', 'proxy.example', '10.0.0.1,', ' '])('refuses TRUST_PROXY=%j, naming it', (value) => {
    expect(configError({ TRUST_PROXY: value })).toMatch(/^\s*TRUST_PROXY:/m);
  });

  it.each(['0', '1', '80', '65535'])('accepts PORT %s', (value) => {
    expect(loadConfig({ PORT: value }).port).toBe(Number(value));
  });

  it.each(['abc', '65536', '70000', '-1', '1.5', 'NaN', 'Infinity'])('refuses PORT %j with a message naming PORT', (value) => {
    const message = configError({ PORT: value });
    expect(message).toContain('invalid configuration');
    expect(message).toMatch(/^\s*PORT:/m);
  });

  it('refuses a bad PG_PORT and WORKER_CONCURRENCY, naming each', () => {
    expect(configError({ PG_PORT: 'x' })).toMatch(/^\s*PG_PORT:/m);
    expect(configError({ WORKER_CONCURRENCY: '0' })).toMatch(/^\s*WORKER_CONCURRENCY:/m);
    expect(configError({ WORKER_CONCURRENCY: '257' })).toMatch(/^\s*WORKER_CONCURRENCY:/m);
    expect(loadConfig({ PG_PORT: '5433', WORKER_CONCURRENCY: '16' })).toMatchObject({ pgPort: 5433, workerConcurrency: 16 });
  });

  it('refuses an unknown LOG_LEVEL and STORAGE, naming each', () => {
    expect(configError({ LOG_LEVEL: 'verbose' })).toMatch(/^\s*LOG_LEVEL:/m);
    expect(configError({ STORAGE: 'gcs' })).toMatch(/^\s*STORAGE:/m);
  });

  it('refuses a FILES_SIGNING_SECRET shorter than 32 characters', () => {
    expect(configError({ FILES_SIGNING_SECRET: 'x'.repeat(31) })).toMatch(/^\s*FILES_SIGNING_SECRET:/m);
    expect(loadConfig({ FILES_SIGNING_SECRET: 'x'.repeat(32) }).filesSigningSecret).toBe('x'.repeat(32));
  });

  it('lists every invalid variable in one message', () => {
    const message = configError({ PORT: 'abc', LOG_LEVEL: 'loud' });
    expect(message).toMatch(/^\s*PORT:/m);
    expect(message).toMatch(/^\s*LOG_LEVEL:/m);
  });
});

describe('loadConfig TLS files', () => {
  it('refuses TLS_CERT_FILE without TLS_KEY_FILE, and the reverse', () => {
    expect(configError({ TLS_CERT_FILE: '/etc/tls/cert.pem' })).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
    expect(configError({ TLS_KEY_FILE: '/etc/tls/key.pem' })).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
  });

  it('accepts both together', () => {
    const config = loadConfig({ TLS_CERT_FILE: '/etc/tls/cert.pem', TLS_KEY_FILE: '/etc/tls/key.pem' });
    expect(config.tlsCertFile).toBe('/etc/tls/cert.pem');
    expect(config.tlsKeyFile).toBe('/etc/tls/key.pem');
  });
});

describe('loadConfig S3 storage', () => {
  it('builds the S3 settings with the default region', () => {
    expect(loadConfig(s3Env).s3).toEqual({
      bucket: 'media',
      region: 'us-east-1',
      endpoint: undefined,
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI',
      forcePathStyle: false,
    });
  });

  it('takes region, endpoint and path style when given', () => {
    const config = loadConfig({ ...s3Env, S3_REGION: 'eu-west-3', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true' });
    expect(config.s3).toMatchObject({ region: 'eu-west-3', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true });
  });

  it.each(['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const)('refuses STORAGE=s3 without %s', (name) => {
    const { [name]: _omitted, ...env } = s3Env;
    expect(configError(env)).toMatch(/STORAGE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/);
    expect(configError({ ...s3Env, [name]: '' })).toMatch(/STORAGE=s3 needs/);
  });

  it('refuses STORAGE=s3 with no S3 settings at all', () => {
    expect(configError({ STORAGE: 's3' })).toMatch(/STORAGE=s3 needs/);
  });

  it('ignores S3 settings when storage is local', () => {
    expect(loadConfig({ S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'a' }).s3).toBeUndefined();
  });
});

describe('loadConfig empty values', () => {
  it('treats every empty-string variable as unset', () => {
    const empty = {
      DATA_DIR: '',
      DATABASE_URL: '',
      PG_PORT: '',
      HOST: '',
      PORT: '',
      PUBLIC_BASE_URL: '',
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      TRUST_PROXY: '',
      ALLOW_PRIVATE_NETWORK_URLS: '',
      FILES_SIGNING_SECRET: '',
      LOG_LEVEL: '',
      STORAGE: '',
      S3_BUCKET: '',
      S3_REGION: '',
      S3_ENDPOINT: '',
      S3_ACCESS_KEY_ID: '',
      S3_SECRET_ACCESS_KEY: '',
      S3_FORCE_PATH_STYLE: '',
      WORKER_CONCURRENCY: '',
    };
    expect(loadConfig(empty)).toEqual(loadConfig({}));
  });

  it('treats an empty TLS_CERT_FILE as missing when TLS_KEY_FILE is set', () => {
    expect(configError({ TLS_CERT_FILE: '', TLS_KEY_FILE: '/k.pem' })).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
  });

  it('treats undefined entries as unset', () => {
    expect(loadConfig({ PORT: undefined, HOST: undefined })).toEqual(loadConfig({}));
  });
});

describe('loadConfig result', () => {
  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(config.port).toBe(8443);
  });
});

describe('loadConfig speech engine', () => {
  const emma = VOICES.find((v) => v.name === 'Emma')!.id;
  const elevenlabs = { SPEECH_ENGINE: 'elevenlabs', ELEVENLABS_API_KEY: 'xi-secret-key' };

  it('defaults to the local engine, without ElevenLabs settings, whatever ELEVENLABS_* say', () => {
    expect(loadConfig({}).speech).toEqual({ engine: 'local', elevenlabs: undefined });
    expect(loadConfig({ ELEVENLABS_API_KEY: 'k', ELEVENLABS_MODEL: 'm' }).speech.engine).toBe('local');
  });

  it('builds the ElevenLabs settings with their defaults', () => {
    expect(loadConfig(elevenlabs).speech).toEqual({
      engine: 'elevenlabs',
      elevenlabs: {
        apiUrl: 'https://api.elevenlabs.io',
        apiKey: 'xi-secret-key',
        voiceIds: {},
        model: 'eleven_multilingual_v2',
        stsModel: 'eleven_multilingual_sts_v2',
      },
    });
  });

  it('takes the URL, the models and the voice mapping when given', () => {
    const speech = loadConfig({
      ...elevenlabs,
      ELEVENLABS_API_URL: 'http://127.0.0.1:9999/proxy',
      ELEVENLABS_MODEL: 'eleven_turbo_v2_5',
      ELEVENLABS_STS_MODEL: 'eleven_english_sts_v2',
      ELEVENLABS_VOICE_IDS: `${emma}=EXAVITQu4vr4xnSDxMaL`,
    }).speech;
    expect(speech.elevenlabs).toEqual({
      apiUrl: 'http://127.0.0.1:9999/proxy',
      apiKey: 'xi-secret-key',
      voiceIds: { [emma]: 'EXAVITQu4vr4xnSDxMaL' },
      model: 'eleven_turbo_v2_5',
      stsModel: 'eleven_english_sts_v2',
    });
  });

  it('parses ELEVENLABS_VOICE_IDS: uuid=providerId pairs, spaces and empty entries ignored, UUIDs lower-cased', () => {
    const james = VOICES.find((v) => v.name === 'James')!.id;
    const ids = (value: string) => loadConfig({ ...elevenlabs, ELEVENLABS_VOICE_IDS: value }).speech.elevenlabs!.voiceIds;
    expect(ids(`${emma}=EXAVITQu4vr4xnSDxMaL,${james}=pNInz6obpgDQGcFmaJgB`)).toEqual({ [emma]: 'EXAVITQu4vr4xnSDxMaL', [james]: 'pNInz6obpgDQGcFmaJgB' });
    expect(ids(` ${emma.toUpperCase()} = EXAVITQu4vr4xnSDxMaL , ,${james}=pNInz6obpgDQGcFmaJgB, `)).toEqual({ [emma]: 'EXAVITQu4vr4xnSDxMaL', [james]: 'pNInz6obpgDQGcFmaJgB' });
    expect(Object.isFrozen(ids(`${emma}=x`))).toBe(true);
  });

  it.each([
    ['no "="', `${emma}`, /is not uuid=providerVoiceId/],
    ['no provider id', `${emma}=`, /is not uuid=providerVoiceId/],
    ['not a UUID', 'emma=EXAVITQu4vr4xnSDxMaL', /"emma" is not a UUID/],
    ['a UUID outside the catalogue', '00000000-0000-4000-8000-000000000000=abc', /00000000-0000-4000-8000-000000000000 is not a catalogue voice/],
    ['a provider id with a slash', `${emma}=../v1/voices`, /must be letters, digits/],
    ['the same voice twice', `${emma}=a,${emma.toUpperCase()}=b`, /is mapped twice/],
  ])('refuses ELEVENLABS_VOICE_IDS with %s, naming the variable', (_what, value, message) => {
    const text = configError({ ...elevenlabs, ELEVENLABS_VOICE_IDS: value });
    expect(text).toMatch(/^\s*ELEVENLABS_VOICE_IDS:/m);
    expect(text).toMatch(message);
  });

  it('refuses SPEECH_ENGINE=elevenlabs without ELEVENLABS_API_KEY (unset or empty)', () => {
    expect(configError({ SPEECH_ENGINE: 'elevenlabs' })).toBe('invalid configuration: SPEECH_ENGINE=elevenlabs needs ELEVENLABS_API_KEY');
    expect(configError({ SPEECH_ENGINE: 'elevenlabs', ELEVENLABS_API_KEY: '' })).toMatch(/SPEECH_ENGINE=elevenlabs needs ELEVENLABS_API_KEY/);
  });

  it('refuses an unknown SPEECH_ENGINE and an ELEVENLABS_API_URL that is not a URL, naming each', () => {
    expect(configError({ SPEECH_ENGINE: 'polly' })).toMatch(/^\s*SPEECH_ENGINE:/m);
    expect(configError({ ...elevenlabs, ELEVENLABS_API_URL: 'api.elevenlabs.io' })).toMatch(/^\s*ELEVENLABS_API_URL:/m);
  });

  it('never puts the API key in a configuration error', () => {
    expect(configError({ ...elevenlabs, ELEVENLABS_VOICE_IDS: 'bad' })).not.toContain('xi-secret-key');
  });

  it('treats empty ELEVENLABS_* and SPEECH_ENGINE variables as unset', () => {
    const empty = { SPEECH_ENGINE: '', ELEVENLABS_API_URL: '', ELEVENLABS_API_KEY: '', ELEVENLABS_VOICE_IDS: '', ELEVENLABS_MODEL: '', ELEVENLABS_STS_MODEL: '' };
    expect(loadConfig(empty)).toEqual(loadConfig({}));
    expect(loadConfig({ ...elevenlabs, ELEVENLABS_VOICE_IDS: '' }).speech.elevenlabs!.voiceIds).toEqual({});
  });
});

describe('tracing and shutdown settings', () => {
  it('traces nowhere by default; the general OTLP endpoint gets /v1/traces, the traces endpoint is used as it is', () => {
    expect(loadConfig({}).tracing).toEqual({ tracesUrl: undefined, serviceName: 'adforge', scheduleDelayMs: 5000 });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.tracesUrl).toBe('http://collector:4318/v1/traces');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/otlp' }).tracing.tracesUrl).toBe('https://t.example/otlp');
    expect(loadConfig({ OTEL_SERVICE_NAME: 'adforge-eu', OTEL_BSP_SCHEDULE_DELAY: '250' }).tracing).toMatchObject({ serviceName: 'adforge-eu', scheduleDelayMs: 250 });
    expect(configError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('a metrics listener off loopback needs METRICS_TOKEN: refused without it, saying how', () => {
    const TOKEN = 'metrics-token-0123456789';
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'metrics.internal']) {
      const message = configError({ METRICS_HOST: host });
      expect(message).toContain(`METRICS_HOST=${host} is not a loopback address`);
      expect(message).toContain('METRICS_TOKEN');
      expect(loadConfig({ METRICS_HOST: host, METRICS_TOKEN: TOKEN }).metrics).toEqual({ host, port: 9464, token: TOKEN });
    }
    // Loopback (the default) needs none; neither does a listener turned off.
    for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost']) expect(loadConfig({ METRICS_HOST: host }).metrics.token).toBeUndefined();
    expect(loadConfig({ METRICS_HOST: '0.0.0.0', METRICS_PORT: '0' }).metrics.port).toBe(0);
  });

  it('drains for 25 s by default; rate-limit buckets are shared unless RATE_LIMIT_STORE=memory', () => {
    expect(loadConfig({}).shutdownGraceSeconds).toBe(25);
    expect(loadConfig({ SHUTDOWN_GRACE_SECONDS: '5' }).shutdownGraceSeconds).toBe(5);
    expect(configError({ SHUTDOWN_GRACE_SECONDS: '0' })).toMatch(/SHUTDOWN_GRACE_SECONDS/);
    expect(loadConfig({}).rateLimitStore).toBe('postgres');
    expect(loadConfig({ RATE_LIMIT_STORE: 'memory' }).rateLimitStore).toBe('memory');
    expect(configError({ RATE_LIMIT_STORE: 'redis' })).toMatch(/RATE_LIMIT_STORE/);
  });
});
