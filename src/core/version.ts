export const SERVICE_NAME = 'svc';
export const SERVICE_VERSION = '0.1.0';
export const SPEC_VERSION = '1.0';
