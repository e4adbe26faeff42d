// The Vercel AI SDK against synthgpt: tools + a structured output + stopWhen, as its docs show it.
// Usage: node ai_sdk_loop.mjs <server url>  -> prints one JSON line per scenario
import { generateText, Output, stepCountIs, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAzure } from "@ai-sdk/azure";
import { z } from "zod";

const url = process.argv[2];
const calls = [];
const tools = {
  get_weather: tool({
    description: "The current weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return { city, temperature_c: 21.5 };
    },
  }),
};
const schema = z.object({ city: z.string(), temperature_c: z.number(), visitors: z.number().int() });

async function run(name, model) {
  calls.length = 0;
  const result = await generateText({
    model,
    tools,
    output: Output.object({ schema }),
    stopWhen: stepCountIs(5),
    prompt: "What is the weather in Lisbon?",
  });
  console.log(JSON.stringify({ name, steps: result.steps.length, calls: [...calls], output: result.output }));
}

const openai = createOpenAI({ baseURL: `${url}/v1`, apiKey: "k" });
const azure = createAzure({ baseURL: `${url}/openai/v1`, apiKey: "k" });
await run("openai.chat", openai.chat("gpt-4o"));
await run("openai.responses", openai.responses("gpt-4o"));
await run("azure.chat", azure.chat("gpt-4o"));
