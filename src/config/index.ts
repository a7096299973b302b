export { loadSettings, configErrorSource, FILE_KEYS, type Settings, type SettingFlags, type LoadSettingsInput } from './settings.js';
export { parseDuration, parseInteger, parseBackendUrl, parseBoolean, DURATION_FORM, BACKEND_FORM, type SettingSource } from './values.js';
export { CONFIG_FILE_NAMES } from './config-file.js';
