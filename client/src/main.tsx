/** Entry point: take the token out of the URL first, then render. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { captureTokenFromUrl } from './api/tokens.ts';
import { App } from './app/App.tsx';
import './styles.css';

captureTokenFromUrl();
// From here the bundle draws the page: index.html's early first screen must not start drawing now.
if (window.__plexusEarly) window.__plexusEarly.booted = true;

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
