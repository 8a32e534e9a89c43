// A chat on the official React hook: `useStream` sends the message, renders the reply as its
// tokens arrive (`messages-tuple` chunks merged by message id), shows an interrupt with a button
// that resumes it, and loads the thread's history when the page opens on an existing thread.
import { useEffect, useState } from "react";
import { useStream } from "@langchain/langgraph-sdk/react";

// Every text each AI message was rendered with, by message id, in order: a reply streamed token
// by token is rendered many times, one sent whole only once. The browser test reads it.
window.chatRenders = {};

function recordRender(message) {
  const texts = (window.chatRenders[message.id] ??= []);
  if (texts.at(-1) !== message.text) texts.push(message.text);
}

/** The text of a message whose content is a string or a list of content blocks. */
function textOf(message) {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
}

function Message({ message }) {
  const text = textOf(message);
  useEffect(() => {
    if (message.type === "ai") recordRender({ id: message.id, text });
  }, [message.id, message.type, text]);
  return (
    <li className={`message ${message.type}`} data-id={message.id}>
      {text}
    </li>
  );
}

export function Chat({ apiUrl, assistantId, initialThreadId, onThreadId }) {
  const [threadId, setThreadId] = useState(initialThreadId);
  const [draft, setDraft] = useState("");
  const stream = useStream({
    apiUrl,
    assistantId,
    messagesKey: "messages",
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      onThreadId(id);
    },
    fetchStateHistory: true,
  });
  const interrupt = stream.interrupt;
  const busy = stream.isLoading || stream.isThreadLoading;

  const send = (event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    const message = { id: crypto.randomUUID(), type: "human", content: text };
    setDraft("");
    stream.submit(
      { messages: [message] },
      {
        // Shown at once, before the server echoes it back in the thread's values.
        optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] }),
      },
    );
  };

  const approve = () => stream.submit(undefined, { command: { resume: "yes" } });

  return (
    <main data-busy={String(busy)} data-thread={threadId ?? ""}>
      <ul id="messages">
        {stream.messages.map((message, i) => (
          <Message key={message.id ?? i} message={message} />
        ))}
      </ul>
      {interrupt?.value && !stream.isLoading && (
        <div id="interrupt">
          <span className="question">{interrupt.value.question}</span>
          <button id="approve" onClick={approve}>
            Approve
          </button>
        </div>
      )}
      {stream.error != null && <p id="error">{String(stream.error)}</p>}
      <form onSubmit={send}>
        <input id="message" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button id="send" type="submit" disabled={busy}>
          Send
        </button>
      </form>
    </main>
  );
}
