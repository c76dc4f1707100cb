// The parser ships no types: the shape it returns (prom2json's), as far as the tests read it.
declare module 'parse-prometheus-text-format' {
  interface ParsedFamily {
    name: string;
    help: string;
    type: string;
    metrics: Array<{ value: string; labels?: Record<string, string> }>;
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
