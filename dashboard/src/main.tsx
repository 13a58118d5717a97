import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, Navigate, RouterProvider } from 'react-router';
import { ApiError } from './api/client';
import { Shell } from './components/Shell';
import { DaysInAddress } from './lib/address-days';
import { RequireSession } from './lib/auth';
import { Actions } from './pages/Actions';
import { Activity } from './pages/Activity';
import { Analytics } from './pages/Analytics';
import { Conversations } from './pages/Conversations';
import { Evals } from './pages/Evals';
import { Gaps } from './pages/Gaps';
import { Home, NotFound } from './pages/Home';
import { Invite } from './pages/Invite';
import { Knowledge } from './pages/Knowledge';
import { Login } from './pages/Login';
import { NewProject } from './pages/NewProject';
import { Settings } from './pages/Settings';
import { Setup } from './pages/Setup';
import { Skills } from './pages/Skills';
import { Users } from './pages/Users';
import { Widget } from './pages/Widget';
import './app.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (403, 404, a validation error) will not change by asking again.
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.status >= 400 && err.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

const router = createBrowserRouter(
  [
    { path: '/login', element: <Login /> },
    { path: '/setup', element: <Setup /> },
    { path: '/invite', element: <Invite /> },
    {
      path: '/',
      element: (
        <RequireSession>
          <Shell />
        </RequireSession>
      ),
      children: [
        { index: true, element: <Home /> },
        { path: 'users', element: <Users /> },
        { path: 'projects/new', element: <NewProject /> },
        {
          path: 'p/:projectId',
          children: [
            { index: true, element: <Navigate to="conversations" replace /> },
            {
              path: 'conversations',
              element: (
                // Its filters read from/to out of the address: a mangled link must not break the page.
                <DaysInAddress names={['from', 'to']}>
                  <Conversations />
                </DaysInAddress>
              ),
            },
            { path: 'conversations/:conversationId', element: <Conversations /> },
            { path: 'knowledge', element: <Knowledge /> },
            { path: 'knowledge/gaps', element: <Gaps /> },
            { path: 'evals', element: <Evals /> },
            { path: 'evals/:evalId', element: <Evals /> },
            { path: 'actions', element: <Actions /> },
            { path: 'skills', element: <Skills /> },
            { path: 'widget', element: <Widget /> },
            { path: 'analytics', element: <Analytics /> },
            { path: 'activity', element: <Activity /> },
            { path: 'settings', element: <Settings /> },
          ],
        },
        { path: '*', element: <NotFound /> },
      ],
    },
  ],
  { basename: '/dashboard' },
);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
