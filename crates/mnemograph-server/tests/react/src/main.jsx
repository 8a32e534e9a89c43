// The page's settings come from its URL, so one bundle talks to any server:
//   index.html?apiUrl=http://127.0.0.1:2024&assistantId=chat[&threadId=...]
// The thread id is written back into the URL once a thread exists, so reloading the page opens
// the same thread and shows its history, as LangGraph's agent-chat-ui keeps it in the query.
import { createRoot } from "react-dom/client";
import { Chat } from "./Chat.jsx";

const params = new URLSearchParams(window.location.search);

function rememberThread(threadId) {
  const url = new URL(window.location.href);
  url.searchParams.set("threadId", threadId);
  window.history.replaceState(null, "", url);
}

createRoot(document.getElementById("root")).render(
  <Chat
    apiUrl={params.get("apiUrl") ?? "http://127.0.0.1:2024"}
    assistantId={params.get("assistantId") ?? "chat"}
    initialThreadId={params.get("threadId")}
    onThreadId={rememberThread}
  />,
);
