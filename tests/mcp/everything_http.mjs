// The reference MCP server (npm @modelcontextprotocol/server-everything, installed by
// scripts/setup.sh) over Streamable HTTP on a port of its own choosing, which it writes on
// stdout ("PORT\n") once it listens, for panto's tests (the server itself takes a fixed PORT
// and logs the one asked for, not the one it got).
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once("listening", () => process.stdout.write(`${this.address().port}\n`));
  return listen.apply(this, args);
};
// The server's own logs go to stderr: stdout is the port's alone.
console.log = console.error;
process.env.PORT = "0";
process.argv[2] = "streamableHttp";
await import("./node_modules/@modelcontextprotocol/server-everything/dist/index.js");
