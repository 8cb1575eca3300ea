// The operator surface: one HTTP server (health, readiness, metrics, mounted Slack routes) and
// the Prometheus implementation of the core's BridgeMetrics.
export {
  createHttpServer,
  type HttpServer,
  type HttpServerOptions,
  type MetricsSource,
  type RequestListener,
} from './http-server.js';
export { createMetrics, LATENCY_BUCKETS, type MetricsOptions, type PromBridgeMetrics } from './metrics.js';
export {
  type CheckValue,
  type HealthSource,
  healthCheck,
  notReady,
  type Readiness,
  type ReadinessCheck,
  type ReadinessReport,
  readinessFrom,
} from './readiness.js';
